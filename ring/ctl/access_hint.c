/* Why a user may not use a member's control socket, and what to do about
 * it: the message of ringctl's exit 1 on EACCES, instead of "unreachable",
 * which would send people looking at the network. */
#define _GNU_SOURCE /* getgrouplist */
#include "ctl/access_hint.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ring_access_message(const struct ring_access_facts *f, char *out, size_t outlen)
{
	const char *g = f->group;
	if (!g[0])
		snprintf(out, outlen,
			 "permission denied on %s: without control_group the control socket is only "
			 "for ringd's user (%s) and root; run as %s, or set control_group = GROUP in "
			 "[ring] of %s and restart the member (docs/operations.md, \"Let user X take "
			 "the lock\")", f->sock, f->owner, f->owner, f->conf);
	else if (!f->in_group_db && !f->in_session)
		snprintf(out, outlen,
			 "permission denied on %s: you are not in group '%s' (control_group); ask an "
			 "administrator to run: usermod -aG %s %s", f->sock, g, g, f->user);
	else if (!f->in_session)
		snprintf(out, outlen,
			 "permission denied on %s: you were added to group '%s' (control_group) after "
			 "this session began; log in again (or run: newgrp %s)", f->sock, g, g);
	else
		snprintf(out, outlen,
			 "permission denied on %s, though you are in group '%s' (control_group): the "
			 "member may have started before control_group was set (restart it), or a "
			 "folder above the socket keeps the group out (each needs o+x, or g+x and "
			 "group %s: ringd -c %s --check)", f->sock, g, g, f->conf);
}

/* Whether this process has GID, as its group or a supplementary one. */
static bool session_has(gid_t gid)
{
	if (getegid() == gid || getgid() == gid)
		return true;
	gid_t list[1024];
	int n = getgroups((int)(sizeof list / sizeof list[0]), list);
	for (int i = 0; i < n; i++)
		if (list[i] == gid)
			return true;
	return false;
}

/* Whether the group database gives USER (primary group BASE) the group GID. */
static bool db_has(const char *user, gid_t base, gid_t gid)
{
	gid_t list[1024];
	int n = (int)(sizeof list / sizeof list[0]);
	if (getgrouplist(user, base, list, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (list[i] == gid)
			return true;
	return false;
}

void ring_access_hint(const struct ring_conf *conf, const char *sock, char *out, size_t outlen)
{
	char user[64], owner[64];
	struct passwd *pw = getpwuid(getuid());
	snprintf(user, sizeof user, "%s", pw ? pw->pw_name : "$USER");
	gid_t base = pw ? pw->pw_gid : getgid();
	struct stat st;
	struct passwd *ow = stat(conf->state_dir, &st) == 0 ? getpwuid(st.st_uid) : NULL;
	if (ow)
		snprintf(owner, sizeof owner, "%s", ow->pw_name);
	else
		snprintf(owner, sizeof owner, "the owner of %.40s", conf->state_dir);
	const struct ring_conf_group *g = &conf->control_group;
	struct ring_access_facts f = {
		.sock = sock, .conf = conf->path, .group = g->name, .user = user, .owner = owner,
		.in_group_db = g->name[0] && db_has(user, base, g->gid),
		.in_session = g->name[0] && session_has(g->gid),
	};
	ring_access_message(&f, out, outlen);
}
