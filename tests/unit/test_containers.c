/* test_containers.c: unit tests for util/hmap (u64 and byte-string keys, growth, iteration) and util/vec. */
#include <stdlib.h>

#include "check.h"
#include "util/hmap.h"
#include "util/vec.h"

static void test_hmap_u64(void)
{
	hs_hmap m = {0};
	CHECK(hs_hmap_get_u64(&m, 1) == NULL);
	bool added = false;
	/* Enough keys to grow the table several times, including 0 and UINT64_MAX. */
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t *v = hs_hmap_put_u64(&m, i * 4096u, &added);
		CHECK(v && added);
		if (v)
			*v = i + 1;
	}
	uint64_t *v = hs_hmap_put_u64(&m, UINT64_MAX, &added);
	CHECK(v && added && *v == 0);
	if (v)
		*v = 7;
	CHECK_EQ_INT(m.count, 5001);
	for (uint64_t i = 0; i < 5000; i++) {
		v = hs_hmap_get_u64(&m, i * 4096u);
		CHECK(v && *v == i + 1);
	}
	CHECK(hs_hmap_get_u64(&m, 4095) == NULL);
	v = hs_hmap_put_u64(&m, 4096u * 10, &added);
	CHECK(v && !added && *v == 11);
	v = hs_hmap_get_u64(&m, UINT64_MAX);
	CHECK(v && *v == 7);
	size_t pos = 0, seen = 0;
	uint64_t sum = 0;
	for (const hs_hmap_slot *s; (s = hs_hmap_next(&m, &pos));) {
		seen++;
		sum += s->value;
	}
	CHECK_EQ_INT(seen, 5001);
	CHECK_EQ_INT(sum, 5000ull * 5001ull / 2 + 7);
	hs_hmap_free(&m);
	CHECK(m.slots == NULL && m.count == 0 && hs_hmap_get_u64(&m, 0) == NULL);
}

static void test_hmap_bytes(void)
{
	hs_hmap m = {0};
	char key[32];
	bool added;
	for (int i = 0; i < 3000; i++) {
		int n = snprintf(key, sizeof key, "key-%d", i);
		uint64_t *v = hs_hmap_put_bytes(&m, key, (size_t)n, &added);
		CHECK(v && added);
		if (v)
			*v = (uint64_t)i;
	}
	/* Keys are copied: the caller's buffer may change. */
	snprintf(key, sizeof key, "key-%d", 1234);
	uint64_t *v = hs_hmap_get_bytes(&m, key, 8);
	CHECK(v && *v == 1234);
	v = hs_hmap_get_bytes(&m, key, 7); /* "key-123": a prefix is another key */
	CHECK(v && *v == 123);
	CHECK(hs_hmap_get_bytes(&m, "key-", 4) == NULL);
	/* Bytes, not strings: embedded NULs count, and the empty key is a key. */
	const char a[] = {'x', 0, 'y'}, b[] = {'x', 0, 'z'};
	CHECK(hs_hmap_put_bytes(&m, a, 3, &added) && added);
	CHECK(hs_hmap_put_bytes(&m, b, 3, &added) && added);
	CHECK(hs_hmap_put_bytes(&m, a, 3, &added) && !added);
	CHECK(hs_hmap_get_bytes(&m, "", 0) == NULL);
	CHECK(hs_hmap_put_bytes(&m, NULL, 0, &added) && added);
	CHECK(hs_hmap_get_bytes(&m, "", 0) != NULL);
	CHECK_EQ_INT(m.count, 3003);
	size_t pos = 0, seen = 0;
	for (const hs_hmap_slot *s; (s = hs_hmap_next(&m, &pos));)
		seen += s->bkey != NULL;
	CHECK_EQ_INT(seen, 3003);
	hs_hmap_free(&m);
	/* FNV-1a's published test vectors. */
	CHECK(hs_hash_bytes("", 0) == 0xcbf29ce484222325ull);
	CHECK(hs_hash_bytes("a", 1) == 0xaf63dc4c8601ec8cull);
}

typedef struct {
	int a;
	char s[13];
} elem;

static void test_vec(void)
{
	hs_vec v = HS_VEC_INIT(sizeof(elem));
	CHECK(v.len == 0 && v.data == NULL);
	for (int i = 0; i < 1000; i++) {
		elem *e = hs_vec_push(&v);
		CHECK(e && e->a == 0 && e->s[0] == 0);
		if (e) {
			e->a = i;
			snprintf(e->s, sizeof e->s, "%d", i);
		}
	}
	CHECK_EQ_INT(v.len, 1000);
	CHECK(v.cap >= 1000);
	const elem *e = hs_vec_at(&v, 777);
	CHECK(e->a == 777 && strcmp(e->s, "777") == 0);
	CHECK(hs_vec_reserve(&v, 5000) == HS_OK && v.cap >= 5000 && v.len == 1000);
	e = hs_vec_at(&v, 999);
	CHECK(e->a == 999);
	/* An impossible size fails cleanly and leaves the vec as it was. */
	CHECK(hs_vec_reserve(&v, SIZE_MAX / 2) == HS_ENOMEM && v.len == 1000);
	elem *all = hs_vec_take(&v);
	CHECK(all && all[10].a == 10 && v.data == NULL && v.len == 0);
	free(all);
	CHECK(hs_vec_push(&v) != NULL && v.len == 1);
	hs_vec_free(&v);
	CHECK(v.data == NULL && v.len == 0 && v.cap == 0);
}

int main(void)
{
	test_hmap_u64();
	test_hmap_bytes();
	test_vec();
	return hs_test_done("test_containers");
}
