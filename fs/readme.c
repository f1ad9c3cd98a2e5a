/*
 * readme.c - the README at the root of the mount: how to use the tree.
 */
#include "readme.h"

const char fsn_readme[] =
	"sessionfs: persistent shell sessions as files\n"
	"\n"
	"  sessions/clone        read it: creates a session, prints its id\n"
	"  sessions/NAME/        mkdir creates a session, rmdir deletes it\n"
	"    cmd                 write a command; it runs when you close the\n"
	"                        file, and close returns when it has ended\n"
	"    stdout stderr       the latest run's output so far\n"
	"    output              stdout and stderr in arrival order\n"
	"    stream              the latest run's output as it arrives\n"
	"    exit                its exit status (a read waits while it runs)\n"
	"    status result.json  the latest run, as key-value lines / JSON\n"
	"    cwd                 the working directory (write to change)\n"
	"    env/NAME            exported variables: write sets, rm unsets\n"
	"    timeout             default command timeout in ms (0: none)\n"
	"    error               recent refusals, one line each\n"
	"    runs/N/             the history of runs; runs/latest is the "
	"newest\n"
	"\n"
	"Example:\n"
	"  mkdir sessions/build\n"
	"  echo 'cd /tmp && export A=1' > sessions/build/cmd\n"
	"  echo 'echo $A from $PWD' > sessions/build/cmd\n"
	"  cat sessions/build/stdout    # 1 from /tmp\n"
	"  cat sessions/build/exit      # 0\n"
	"  rmdir sessions/build\n";
