/* util/text.c: file reading, edit distance, path and directory-listing helpers; see text.h. */
#include "util/text.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hindsight/vec.h"
#include "util/compat.h"

hs_status hs_read_file(const char *path, size_t max, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	FILE *f = hs_fopen(path, "rb");
	if (!f)
		return errno == ENOENT || errno == ENOTDIR ? HS_ENOENT : HS_EIO;
	hs_status st = HS_OK;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		st = HS_ENOMEM;
		goto fail;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max + 1) {
				st = HS_ELIMIT;
				goto fail;
			}
			char *p = realloc(buf, cap * 2);
			if (!p) {
				st = HS_ENOMEM;
				goto fail;
			}
			buf = p;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0) {
			if (ferror(f)) {
				st = HS_EIO;
				goto fail;
			}
			break;
		}
	}
	if (n > max) {
		st = HS_ELIMIT;
		goto fail;
	}
	buf[n] = '\0';
	fclose(f);
	*out = buf;
	*len = n;
	return HS_OK;
fail:
	free(buf);
	fclose(f);
	return st;
}

size_t hs_edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 128 || lb > 128)
		return cap + 1;
	size_t prev[129], cur[129];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		size_t rowmin = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			cur[j] = v;
			if (v < rowmin)
				rowmin = v;
		}
		if (rowmin > cap)
			return cap + 1;
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

const char *hs_closest(const char *word, const char *const *candidates)
{
	/* A third of the word's length (at least 1, at most 3) separates a typo
	 * from a different word well enough for key names. */
	size_t wl = strlen(word);
	size_t cap = wl / 3;
	if (cap < 1)
		cap = 1;
	if (cap > 3)
		cap = 3;
	const char *best = NULL;
	size_t bestd = cap + 1;
	for (size_t i = 0; candidates[i]; i++) {
		size_t d = hs_edit_distance(word, candidates[i], cap);
		if (d < bestd) {
			bestd = d;
			best = candidates[i];
		}
	}
	return best;
}

char *hs_path_sibling(const char *base, const char *rel)
{
	if (hs_path_is_absolute(rel))
		return strdup(rel);
	const char *slash = hs_path_last_sep(base);
	size_t dl = slash ? (size_t)(slash - base) + 1 : 0;
	size_t rl = strlen(rel);
	char *p = malloc(dl + rl + 1);
	if (!p)
		return NULL;
	memcpy(p, base, dl);
	memcpy(p + dl, rel, rl + 1);
	return p;
}

bool hs_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

size_t hs_utf8_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

size_t hs_utf16le_to_utf8(const uint8_t *p, size_t max_units, char *out, size_t cap, bool *truncated,
			  bool *terminated)
{
	size_t o = 0, i = 0;
	bool room = true, nul = false;
	if (truncated)
		*truncated = false;
	while (i < max_units) {
		uint32_t c = le16(p + 2 * i++);
		if (c == 0) {
			nul = true;
			break;
		}
		if (c >= 0xD800 && c < 0xDC00 && i < max_units && le16(p + 2 * i) >= 0xDC00 && le16(p + 2 * i) < 0xE000)
			c = 0x10000 + ((c - 0xD800) << 10) + (uint32_t)(le16(p + 2 * i++) - 0xDC00);
		else if (c >= 0xD800 && c < 0xE000)
			c = 0xFFFD;
		if (!room)
			continue;
		char b[4];
		size_t n;
		if (c < 0x80) {
			b[0] = (char)c;
			n = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xC0 | c >> 6);
			b[1] = (char)(0x80 | (c & 0x3F));
			n = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xE0 | c >> 12);
			b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[2] = (char)(0x80 | (c & 0x3F));
			n = 3;
		} else {
			b[0] = (char)(0xF0 | c >> 18);
			b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
			b[3] = (char)(0x80 | (c & 0x3F));
			n = 4;
		}
		if (o + n >= cap) {
			room = false;
			if (truncated)
				*truncated = true;
			continue;
		}
		memcpy(out + o, b, n);
		o += n;
	}
	if (cap)
		out[o] = '\0';
	if (terminated)
		*terminated = nul;
	return i;
}

const char *hs_path_base(const char *path)
{
	const char *b = path;
	for (const char *p = path; *p; p++)
		if (*p == '/' || *p == '\\')
			b = p + 1;
	return b;
}

bool hs_path_up(char *path)
{
	char *slash = strrchr(path, '/');
	if (!slash || !strcmp(path, "/"))
		return false;
	if (slash == path)
		path[1] = '\0';
	else
		*slash = '\0';
	return true;
}

char *hs_path_join(const char *dir, const char *name)
{
	size_t l = strlen(dir), n = strlen(name);
	bool sep = l && (dir[l - 1] == '/' || dir[l - 1] == '\\');
	char *p = malloc(l + !sep + n + 1);
	if (!p)
		return NULL;
	memcpy(p, dir, l);
	if (!sep)
		p[l++] = '/';
	memcpy(p + l, name, n + 1);
	return p;
}

bool hs_path_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool hs_path_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

hs_status hs_dir_list(const char *dir, hs_dir_keep_fn keep, void *ctx, size_t max, char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return HS_ENOENT;
	hs_status st = HS_OK;
	char **v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *de;
	while ((max == 0 || k < max) && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (keep && !keep(dir, de->d_name, ctx)))
			continue;
		char **nv = hs_array_grow(v, sizeof *v, k, &cap, 64);
		char *name = nv ? strdup(de->d_name) : NULL;
		if (nv)
			v = nv;
		if (!name) {
			st = HS_ENOMEM;
			break;
		}
		v[k++] = name;
	}
	closedir(d);
	if (k > 1)
		qsort(v, k, sizeof *v, name_cmp);
	*names = v;
	*n = k;
	return st;
}

void hs_dir_list_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
