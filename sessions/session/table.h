/*
 * table.h - the table of live sessions, in creation order (lookups and
 * iteration are in sess.h).
 */
#ifndef SFS_TABLE_H
#define SFS_TABLE_H

struct sess;

void table_add(struct sess *s);
void table_del(struct sess *s);

#endif
