/* test_objs.c - the id -> object table: add, get, del, growth, tombstones,
 * ids reused by an upgrade. */
#include <stdint.h>
#include "sessions/core/objs.h"
#include "unit.h"

/* Distinct addresses to register; only compared, never dereferenced. */
static char pool[200000];

START_TEST(add_get)
{
	uint64_t a = objs_add(OBJ_SESS, &pool[1]);
	uint64_t b = objs_add(OBJ_RUN, &pool[2]);
	uint64_t c = objs_add(OBJ_ENVVAR, &pool[3]);
	uint64_t d = objs_add(OBJ_ROOTENV, &pool[4]);

	ck_assert(a != 0 && b != 0 && c != 0 && d != 0);
	ck_assert(a < b && b < c && c < d);
	ck_assert_ptr_eq(objs_get(a, OBJ_SESS), &pool[1]);
	ck_assert_ptr_eq(objs_get(b, OBJ_RUN), &pool[2]);
	ck_assert_ptr_eq(objs_get(c, OBJ_ENVVAR), &pool[3]);
	ck_assert_ptr_eq(objs_get(d, OBJ_ROOTENV), &pool[4]);
	ck_assert_int_eq(objs_kind(a), OBJ_SESS);
	ck_assert_int_eq(objs_kind(b), OBJ_RUN);
	ck_assert_int_eq(objs_kind(c), OBJ_ENVVAR);
	ck_assert_int_eq(objs_kind(d), OBJ_ROOTENV);
}
END_TEST

START_TEST(wrong_kind)
{
	uint64_t a = objs_add(OBJ_SESS, &pool[1]);

	ck_assert_ptr_null(objs_get(a, OBJ_RUN));
	ck_assert_ptr_null(objs_get(a, OBJ_ENVVAR));
	ck_assert_ptr_null(objs_get(a, OBJ_ROOTENV));
	ck_assert_ptr_null(objs_get(a, OBJ_NONE));
	ck_assert_ptr_eq(objs_get(a, OBJ_SESS), &pool[1]);
}
END_TEST

START_TEST(unknown_ids)
{
	uint64_t a;

	/* (in a fresh test process: before the table exists) */
	ck_assert_ptr_null(objs_get(1ULL << 40, OBJ_SESS));
	ck_assert_int_eq(objs_kind(1ULL << 40), OBJ_NONE);
	objs_del(1ULL << 40);
	a = objs_add(OBJ_SESS, &pool[1]);
	ck_assert_ptr_null(objs_get(0, OBJ_SESS));
	ck_assert_ptr_null(objs_get(0, OBJ_NONE));
	ck_assert_int_eq(objs_kind(0), OBJ_NONE);
	ck_assert_ptr_null(objs_get(a + 1, OBJ_SESS));
	ck_assert_ptr_null(objs_get(a + 1000000, OBJ_SESS));
	ck_assert_int_eq(objs_kind(a + 1), OBJ_NONE);
	objs_del(0);
	objs_del(a + 1);
	ck_assert_ptr_eq(objs_get(a, OBJ_SESS), &pool[1]);
}
END_TEST

/* The id that marks a deleted slot must not find that slot. */
START_TEST(tombstone_id)
{
	uint64_t a = objs_add(OBJ_RUN, &pool[1]);

	objs_del(a);
	ck_assert_ptr_null(objs_get(UINT64_MAX, OBJ_RUN));
	ck_assert_ptr_null(objs_get(UINT64_MAX, OBJ_NONE));
	ck_assert_int_eq(objs_kind(UINT64_MAX), OBJ_NONE);
	objs_del(UINT64_MAX);
	ck_assert_ptr_null(objs_get(a, OBJ_RUN));
}
END_TEST

START_TEST(del)
{
	uint64_t a = objs_add(OBJ_SESS, &pool[1]);
	uint64_t b = objs_add(OBJ_SESS, &pool[2]);

	objs_del(a);
	ck_assert_ptr_null(objs_get(a, OBJ_SESS));
	ck_assert_int_eq(objs_kind(a), OBJ_NONE);
	ck_assert_ptr_eq(objs_get(b, OBJ_SESS), &pool[2]);
	/* twice is harmless and does not hurt the others */
	objs_del(a);
	ck_assert_ptr_eq(objs_get(b, OBJ_SESS), &pool[2]);
	objs_del(b);
	ck_assert_ptr_null(objs_get(b, OBJ_SESS));
}
END_TEST

/* A NULL object is a legal value (distinct from "absent" only by kind). */
START_TEST(null_ptr)
{
	uint64_t a = objs_add(OBJ_RUN, NULL);

	ck_assert(a != 0);
	ck_assert_int_eq(objs_kind(a), OBJ_RUN);
	ck_assert_ptr_null(objs_get(a, OBJ_RUN));
	objs_del(a);
	ck_assert_int_eq(objs_kind(a), OBJ_NONE);
}
END_TEST

#define MANY 20000

/* Thousands of ids: the table grows and every one stays findable. */
START_TEST(many)
{
	static uint64_t id[MANY];

	for (int i = 0; i < MANY; i++) {
		id[i] = objs_add(i % 2 ? OBJ_RUN : OBJ_SESS, &pool[i]);
		ck_assert(id[i] != 0);
		if (i)
			ck_assert(id[i] > id[i - 1]);
	}
	for (int i = 0; i < MANY; i++) {
		enum obj_kind k = i % 2 ? OBJ_RUN : OBJ_SESS;

		ck_assert_ptr_eq(objs_get(id[i], k), &pool[i]);
		ck_assert_int_eq(objs_kind(id[i]), k);
	}
	/* delete every third; the others stay */
	for (int i = 0; i < MANY; i += 3)
		objs_del(id[i]);
	for (int i = 0; i < MANY; i++) {
		enum obj_kind k = i % 2 ? OBJ_RUN : OBJ_SESS;

		if (i % 3 == 0)
			ck_assert_ptr_null(objs_get(id[i], k));
		else
			ck_assert_ptr_eq(objs_get(id[i], k), &pool[i]);
	}
	/* then all of them */
	for (int i = 0; i < MANY; i++)
		objs_del(id[i]);
	for (int i = 0; i < MANY; i++)
		ck_assert_int_eq(objs_kind(id[i]), OBJ_NONE);
}
END_TEST

/*
 * Churn: a small live set, hundreds of thousands of adds and deletes.
 * Tombstones pile up and must be cleared; ids are never reused, so every
 * deleted id keeps finding nothing.
 */
START_TEST(churn)
{
	enum { LIVE = 300, ROUNDS = 200000 };
	static uint64_t live[LIVE];
	static int slot_of[LIVE];
	uint64_t last = 0, first;

	for (int i = 0; i < LIVE; i++) {
		live[i] = objs_add(OBJ_ENVVAR, &pool[i]);
		slot_of[i] = i;
	}
	first = live[0];
	for (int r = 0; r < ROUNDS; r++) {
		int k = (int)((unsigned)r * 7919u % LIVE);
		uint64_t old = live[k];
		int p = (r + LIVE) % (int)sizeof(pool);

		objs_del(old);
		live[k] = objs_add(OBJ_ENVVAR, &pool[p]);
		slot_of[k] = p;
		ck_assert(live[k] > old);
		ck_assert(live[k] > last);
		last = live[k];
		ck_assert_ptr_null(objs_get(old, OBJ_ENVVAR));
	}
	for (int i = 0; i < LIVE; i++)
		ck_assert_ptr_eq(objs_get(live[i], OBJ_ENVVAR),
				 &pool[slot_of[i]]);
	/* a sample of long-deleted ids */
	for (uint64_t id = first; id < first + 1000; id++) {
		bool is_live = false;

		for (int i = 0; i < LIVE; i++)
			is_live |= live[i] == id;
		if (!is_live)
			ck_assert_int_eq(objs_kind(id), OBJ_NONE);
	}
}
END_TEST

/* Grow, shrink to nothing, grow again: the second wave works too. */
START_TEST(waves)
{
	static uint64_t id[5000];

	for (int w = 0; w < 5; w++) {
		for (int i = 0; i < 5000; i++)
			id[i] = objs_add(OBJ_RUN, &pool[i + w]);
		for (int i = 0; i < 5000; i++)
			ck_assert_ptr_eq(objs_get(id[i], OBJ_RUN),
					 &pool[i + w]);
		for (int i = 4999; i >= 0; i--)
			objs_del(id[i]);
		for (int i = 0; i < 5000; i += 97)
			ck_assert_ptr_null(objs_get(id[i], OBJ_RUN));
	}
}
END_TEST

/* An upgrade makes objects again with their ids; an id named twice, or
 * one in use, gets a fresh id rather than a second object under it. */
START_TEST(reuse)
{
	uint64_t a = objs_add(OBJ_SESS, &pool[10]), b, c, d;

	objs_reuse(a + 1000);
	b = objs_add(OBJ_RUN, &pool[11]);
	ck_assert_uint_eq(b, a + 1000);
	objs_reuse(b);
	c = objs_add(OBJ_RUN, &pool[12]);
	ck_assert_uint_ne(c, b);
	ck_assert_ptr_eq(objs_get(b, OBJ_RUN), &pool[11]);
	ck_assert_ptr_eq(objs_get(c, OBJ_RUN), &pool[12]);
	d = objs_add(OBJ_RUN, &pool[13]);
	ck_assert(d > b && d != c); /* fresh ids above every reused one */
}
END_TEST

/* The next program of an upgrade gives no fresh id the old one gave. */
START_TEST(id_floor)
{
	uint64_t a = objs_add(OBJ_SESS, &pool[20]), b, c;

	ck_assert_uint_eq(objs_next(), a + 1);
	objs_floor(a + 500);
	objs_reuse(a + 7); /* an object made again below the floor */
	b = objs_add(OBJ_RUN, &pool[21]);
	ck_assert_uint_eq(b, a + 7);
	c = objs_add(OBJ_RUN, &pool[22]);
	ck_assert_uint_ge(c, a + 500);
	objs_floor(a); /* a floor below changes nothing */
	ck_assert_uint_gt(objs_add(OBJ_RUN, &pool[23]), c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("objs");
	TCase *tc = tcase_create("basic");

	tcase_add_test(tc, add_get);
	tcase_add_test(tc, wrong_kind);
	tcase_add_test(tc, unknown_ids);
	tcase_add_test(tc, tombstone_id);
	tcase_add_test(tc, del);
	tcase_add_test(tc, null_ptr);
	tcase_add_test(tc, reuse);
	tcase_add_test(tc, id_floor);
	suite_add_tcase(s, tc);
	tc = tcase_create("volume");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, many);
	tcase_add_test(tc, churn);
	tcase_add_test(tc, waves);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
