/*
 * libmount.c - util-linux libmount, loaded on first use (dlopen), not with
 * core.so: it brings libblkid, libselinux and libpcre2, whose loading cost
 * as much as the rest of `mountns show`, and the statmount path needs none
 * of them. mountinfo.c parses with it; ns.c, mount.c, files.c and process.c
 * preload it before the process changes its root or forks
 * (lmns_libmount_preload), so it sits low, in layer 2, below every file that
 * needs it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "lmns.h"

struct lmns_libmount lmns_lm;

/* The libmount functions mountns calls, in struct lmns_libmount's order. */
static const char *const lmns_lm_names[] = {
		"mnt_free_iter",
		"mnt_fs_get_devno",
		"mnt_fs_get_fstype",
		"mnt_fs_get_id",
		"mnt_fs_get_optional_fields",
		"mnt_fs_get_parent_id",
		"mnt_fs_get_vfs_options",
		"mnt_new_iter",
		"mnt_new_table",
		"mnt_table_get_nents",
		"mnt_table_get_userdata",
		"mnt_table_next_fs",
		"mnt_table_parse_stream",
		"mnt_table_set_parser_errcb",
		"mnt_table_set_userdata",
		"mnt_unref_table",
};

/*
 * Load libmount (once per process; it stays loaded) into lmns_lm. NULL, or
 * why not (dlerror's text). Once the process has changed its root
 * (pivot_root, chroot, setns into another mount namespace) the library is
 * out of reach: lmns_libmount_preload loads it before each of those and
 * before fork, so a child parses what its parent could.
 */
const char *lmns_libmount_load(void)
{
	static void *h;
	void *fn[sizeof lmns_lm_names / sizeof lmns_lm_names[0]];
	/* the struct is the array of pointers fn, without padding */
	typedef char lmns_lm_fits[sizeof lmns_lm == sizeof fn ? 1 : -1];
	const char *why;
	size_t i;

	(void)sizeof(lmns_lm_fits);
	if (h)
		return NULL;
	dlerror();
	h = dlopen("libmount.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		why = dlerror();
		return why ? why : "libmount.so.1: cannot load it";
	}
	for (i = 0; i < sizeof fn / sizeof fn[0]; i++) {
		fn[i] = dlsym(h, lmns_lm_names[i]);
		if (!fn[i]) {
			why = dlerror();
			dlclose(h);
			h = NULL;
			return why ? why : lmns_lm_names[i];
		}
	}
	/* each pointer from dlsym, as POSIX allows: a void * to a function */
	memcpy(&lmns_lm, fn, sizeof lmns_lm);
	return NULL;
}

void lmns_libmount_preload(void)
{
	int err = errno;

	(void)lmns_libmount_load();	/* a failure is reported by the parse */
	errno = err;
}
