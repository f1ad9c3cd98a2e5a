#!/usr/bin/env python3
"""lsoff.py DIR OFF: the names getdents64(2) gives for DIR, opened afresh
and lseek'ed to OFF (a directory offset, as telldir gave it), one per
line. Shows what a listing that does not start at 0 (seekdir, a reader
in chunks) is served: the kernel checks a cached listing's freshness
only at offset 0."""
import ctypes
import os
import sys

SYS_GETDENTS64 = {"x86_64": 217, "aarch64": 61}[os.uname().machine]

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.lseek(fd, int(sys.argv[2]), os.SEEK_SET)
buf = ctypes.create_string_buffer(1 << 16)
while True:
    n = libc.syscall(SYS_GETDENTS64, fd, buf, len(buf))
    if n < 0:
        sys.exit("lsoff: getdents64: " + os.strerror(ctypes.get_errno()))
    if n == 0:
        break
    raw, pos = buf.raw[:n], 0
    while pos < n:  # struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name
        reclen = int.from_bytes(raw[pos + 16:pos + 18], "little")
        print(raw[pos + 19:pos + reclen].split(b"\0", 1)[0].decode(errors="replace"))
        pos += reclen
os.close(fd)
