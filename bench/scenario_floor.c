/*
 * bench/scenario_floor.c - the C floor of bench/scenario.lua (issue 15):
 * the kernel steps of a mountns scenario done by a small C program, timed
 * by itself, so bench/scenario.lua can put mountns's time over it.
 *
 *   scenario_floor article N   the seed article's scenario N times
 *   scenario_floor userns N    the user-namespace scenario N times
 *   scenario_floor empty N     an empty scenario N times
 *   scenario_floor fork N      N fork + _exit + waitpid of this program (the
 *                              parent's part of every scenario, nothing in
 *                              the child: what bench/scenario.lua puts the
 *                              same of its own Lua process over)
 *   scenario_floor call N      N round trips to an agent (a pipe to a
 *                              process in another user namespace that
 *                              does access(2)) and N access(2) calls done
 *                              directly
 *   scenario_floor files N P   N files as `mountns run -j P` runs them
 *                              (bench/jobs.lua): P workers, each file a
 *                              forked process with a private copy of the
 *                              caller's namespace that runs the article's
 *                              scenario in a child, says "done" and exits;
 *                              its worker starts the next file at "done"
 *                              and reaps the last one meanwhile
 *   scenario_floor pairs N P   N fork + unshare(CLONE_NEWNS) + exit, P
 *                              workers (the kernel's part alone)
 *   scenario_floor umount N P  N mount + umount of a tmpfs, P workers each
 *                              on a directory of its own in one namespace
 *                              (the mount lock and the expedited RCU grace
 *                              period of every umount)
 *
 * Prints the seconds of one scenario (or one call: "agent direct"; or the
 * wall seconds of all N files or pairs).
 * Same steps as mountns: once, a template namespace holding one tmpfs
 * (the caller's namespace is never copied per scenario); per scenario a
 * forked child that enters the template, unshares a copy, mounts a tmpfs
 * and pivots into it, does the scenario's mounts, checks what the kernel
 * did by reading mountinfo in each namespace, and writes its result to a
 * pipe the parent reads before it reaps the child. Everything happens in a
 * private mount namespace of this program (made first), never the host's.
 *
 * Built by bench/scenario.lua: cc -O2 -o build/scenario_floor bench/scenario_floor.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int procfd = -1;
static int template_fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "scenario_floor: %s: %s\n", what, strerror(errno));
	exit(2);
}

#define CHECK(x) do { if ((x) < 0) die(#x); } while (0)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ns_fd(void)
{
	int fd = openat(procfd, "self/ns/mnt", O_RDONLY | O_CLOEXEC);

	CHECK(fd);
	return fd;
}

/* mountinfo of this process's namespace into buf */
static void mountinfo(char *buf, size_t size)
{
	int fd = openat(procfd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	CHECK(fd);
	while (got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(fd);
}

/* the optional fields (up to " - ") of the line whose mount point is path,
 * or NULL: "shared:N", "master:N", ... */
static const char *fields_of(const char *info, const char *path, char *out, size_t size)
{
	const char *line = info;
	size_t plen = strlen(path);

	while (line && *line) {
		const char *end = strchr(line, '\n');
		const char *p = line;
		int i;

		for (i = 0; i < 4 && p; i++) {	/* id parent maj:min root */
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		if (p && strncmp(p, path, plen) == 0 && p[plen] == ' ') {
			const char *opt = strchr(p + plen + 1, ' ');	/* after options */
			const char *dash = strstr(p, " - ");
			size_t len;

			if (!opt || !dash)
				return NULL;
			len = opt < dash ? (size_t)(dash - opt) : 0;
			if (len >= size)
				len = size - 1;
			memcpy(out, opt, len);
			out[len] = 0;
			return out;
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

static const char *group(const char *fields, const char *tag, char *out)
{
	const char *p = fields ? strstr(fields, tag) : NULL;

	if (!p)
		return NULL;
	sscanf(p + strlen(tag), "%31[0-9]", out);
	return out;
}

static void write_map(const char *file, const char *text)
{
	int fd = openat(procfd, file, O_WRONLY | O_CLOEXEC);

	CHECK(fd);
	if (write(fd, text, strlen(text)) < 0)
		die(file);
	close(fd);
}

/* the template: a namespace whose only mount is a small tmpfs */
static void make_template(void)
{
	int p[2];
	pid_t pid;
	char c, path[64];

	CHECK(pipe2(p, O_CLOEXEC));
	pid = fork();
	CHECK(pid);
	if (pid == 0) {
		CHECK(unshare(CLONE_NEWNS));
		CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
		CHECK(mount("floor", "/tmp", "tmpfs", 0, "mode=0755,size=64k"));
		CHECK(mkdir("/tmp/root", 0755));
		CHECK(chdir("/tmp"));
		CHECK(syscall(SYS_pivot_root, ".", "."));
		CHECK(umount2(".", MNT_DETACH));
		CHECK(chdir("/"));
		if (write(p[1], "t", 1) != 1)
			die("write");
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		die("template");
	snprintf(path, sizeof path, "%d/ns/mnt", pid);
	template_fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	CHECK(template_fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
}

/* a scenario child's set-up: a copy of the template, its own tmpfs as / */
static void enter_template(void)
{
	CHECK(setns(template_fd, CLONE_NEWNS));
	CHECK(unshare(CLONE_NEWNS));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	CHECK(mount("mountns", "/root", "tmpfs", 0, "mode=0755"));
	CHECK(chdir("/root"));
	CHECK(syscall(SYS_pivot_root, ".", "."));
	CHECK(umount2(".", MNT_DETACH));
	CHECK(chdir("/"));
}

static int article(void)
{
	static char info[65536];
	char f[256], gx1[32], gz1[32], gx2[32];
	int sh1, sh2;

	CHECK(mkdir("/X", 0755));
	CHECK(mkdir("/Y", 0755));
	CHECK(mkdir("/Z", 0755));
	CHECK(mount("sda3", "/X", "tmpfs", 0, NULL));
	CHECK(mount(NULL, "/X", NULL, MS_SHARED, NULL));
	CHECK(mount("sda5", "/Y", "tmpfs", 0, NULL));
	CHECK(mount(NULL, "/Y", NULL, MS_SHARED, NULL));
	sh1 = ns_fd();
	CHECK(unshare(CLONE_NEWNS));	/* propagation unchanged */
	sh2 = ns_fd();
	CHECK(setns(sh1, CLONE_NEWNS));
	CHECK(mount("/X", "/Z", NULL, MS_BIND, NULL));
	mountinfo(info, sizeof info);
	if (!group(fields_of(info, "/X", f, sizeof f), "shared:", gx1) ||
	    !group(fields_of(info, "/Z", f, sizeof f), "shared:", gz1))
		return 1;
	CHECK(setns(sh2, CLONE_NEWNS));
	mountinfo(info, sizeof info);
	if (!group(fields_of(info, "/X", f, sizeof f), "shared:", gx2) ||
	    fields_of(info, "/Z", f, sizeof f))
		return 1;
	close(sh1);
	close(sh2);
	return strcmp(gx1, gz1) || strcmp(gx1, gx2);
}

/* the agent: a process in a new user namespace (root mapped to the
 * caller) with a new mount namespace; serves requests one byte each */
static pid_t start_agent(int *req, int *rep)
{
	int a[2], b[2];
	pid_t pid;
	char c;

	CHECK(pipe2(a, O_CLOEXEC));
	CHECK(pipe2(b, O_CLOEXEC));
	pid = fork();
	CHECK(pid);
	if (pid == 0) {
		char map[64];
		uid_t uid = geteuid();
		gid_t gid = getegid();

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(a[1]);
		close(b[0]);
		CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNS));
		write_map("self/setgroups", "deny");
		snprintf(map, sizeof map, "0 %d 1", (int)uid);
		write_map("self/uid_map", map);
		snprintf(map, sizeof map, "0 %d 1", (int)gid);
		write_map("self/gid_map", map);
		if (write(b[1], "r", 1) != 1)
			_exit(1);
		while (read(a[0], &c, 1) == 1) {
			char r = 'k';

			if (c == 'm') {	/* mkdir /X/c, mount a tmpfs there */
				if (mkdir("/X/c", 0755) < 0 ||
				    mount("c", "/X/c", "tmpfs", 0, NULL) < 0)
					r = 'e';
			} else if (c == 'l') {	/* the lock probe: a throw-away copy */
				pid_t p = fork();
				int st;

				if (p == 0) {
					if (unshare(CLONE_NEWNS) < 0 ||
					    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
						_exit(3);
					_exit(umount2("/X", MNT_DETACH) < 0 && errno == EINVAL ? 1 : 0);
				}
				waitpid(p, &st, 0);
				r = WEXITSTATUS(st) == 1 ? 'L' : 'U';
			} else if (c == 'a') {
				r = access("/", F_OK) == 0 ? 'k' : 'e';
			}
			if (write(b[1], &r, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	if (read(b[0], &c, 1) != 1)
		die("agent");
	*req = a[1];
	*rep = b[0];
	return pid;
}

static char ask(int req, int rep, char c)
{
	if (write(req, &c, 1) != 1 || read(rep, &c, 1) != 1)
		die("agent call");
	return c;
}

static int userns(void)
{
	static char info[65536];
	char f[256], path[64], g[32];
	int req, rep, ctr, sh1;
	pid_t agent;

	CHECK(mkdir("/X", 0755));
	CHECK(mount("sda3", "/X", "tmpfs", 0, NULL));
	CHECK(mount(NULL, "/X", NULL, MS_SHARED, NULL));
	sh1 = ns_fd();
	agent = start_agent(&req, &rep);
	snprintf(path, sizeof path, "%d/ns/mnt", agent);
	ctr = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	CHECK(ctr);
	if (ask(req, rep, 'm') != 'k')
		return 1;
	CHECK(setns(ctr, CLONE_NEWNS));
	mountinfo(info, sizeof info);
	if (!group(fields_of(info, "/X", f, sizeof f), "master:", g) ||
	    !fields_of(info, "/X/c", f, sizeof f))
		return 1;
	CHECK(setns(sh1, CLONE_NEWNS));
	if (ask(req, rep, 'l') != 'L')
		return 1;
	close(req);
	close(rep);
	kill(agent, SIGKILL);
	waitpid(agent, NULL, 0);
	close(ctr);
	close(sh1);
	return 0;
}

static int empty(void)
{
	return 0;
}

static void one(int (*body)(void))
{
	int p[2];
	pid_t pid;
	char c;
	int st;

	CHECK(pipe2(p, O_CLOEXEC));
	pid = fork();
	CHECK(pid);
	if (pid == 0) {
		close(p[0]);
		enter_template();
		c = body() ? 'f' : 'o';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1 || c != 'o') {
		fprintf(stderr, "scenario_floor: the scenario failed\n");
		exit(1);
	}
	close(p[0]);
	waitpid(pid, &st, 0);
}

/* fork + _exit + waitpid: the seconds of one */
static double forks(int n)
{
	double t0 = now();
	pid_t pid;
	int i, st;

	for (i = 0; i < n; i++) {
		pid = fork();
		CHECK(pid);
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("waitpid");
	}
	return (now() - t0) / n;
}

/* a file's process under mountns run: a private copy of the caller's
 * namespace (the runner's script child), one scenario, "done", exit */
static void file(int w)
{
	CHECK(unshare(CLONE_NEWNS));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	one(article);
	if (write(w, "d", 1) != 1)
		_exit(1);
	_exit(0);
}

/* fork + unshare + exit: a namespace made and torn down */
static void pair(int w)
{
	(void)w;
	CHECK(unshare(CLONE_NEWNS));
	_exit(0);
}

/* n runs of body in forked children, p workers at once: a worker starts
 * its next child when the last one wrote its byte or ended (the pipe's
 * end of file), and reaps children without waiting for their exit (the
 * teardown of their namespaces overlaps the next one); the wall seconds */
static double workers(void (*body)(int), int n, int p)
{
	double t0 = now();
	int k;

	for (k = 0; k < p; k++) {
		pid_t w = fork();

		CHECK(w);
		if (w == 0) {
			int i;

			for (i = k; i < n; i += p) {
				int fd[2];
				pid_t pid;
				char c;

				CHECK(pipe2(fd, O_CLOEXEC));
				pid = fork();
				CHECK(pid);
				if (pid == 0) {
					close(fd[0]);
					body(fd[1]);
				}
				close(fd[1]);
				if (read(fd[0], &c, 1) < 0)
					die("read");
				close(fd[0]);
				while (waitpid(-1, NULL, WNOHANG) > 0)
					;
			}
			while (wait(NULL) > 0)
				;
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return now() - t0;
}

/* n mount + umount of a tmpfs, p workers at once; the wall seconds */
static double umounts(int n, int p)
{
	double t0 = now();
	int k;

	CHECK(mount("floor", "/tmp", "tmpfs", 0, "mode=0755"));
	for (k = 0; k < p; k++) {
		pid_t w = fork();

		CHECK(w);
		if (w == 0) {
			char dir[32];
			int i;

			snprintf(dir, sizeof dir, "/tmp/%d", k);
			CHECK(mkdir(dir, 0755));
			for (i = k; i < n; i += p) {
				CHECK(mount("u", dir, "tmpfs", 0, NULL));
				CHECK(umount2(dir, 0));
			}
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return now() - t0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20, i;
	double t0;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: scenario_floor article|userns|empty|call|fork N, "
			"files|pairs|umount N P\n");
		return 2;
	}
	/* this program's own private namespace: nothing reaches the host */
	CHECK(unshare(CLONE_NEWNS));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(procfd);
	make_template();
	if (strcmp(argv[1], "files") == 0 || strcmp(argv[1], "pairs") == 0 ||
	    strcmp(argv[1], "umount") == 0) {
		int p = argc > 3 ? atoi(argv[3]) : 1;

		if (p < 1) {
			fprintf(stderr, "scenario_floor: P >= 1 expected\n");
			return 2;
		}
		printf("%.9f\n", argv[1][0] == 'u' ? umounts(n, p)
		       : workers(argv[1][0] == 'f' ? file : pair, n, p));
		return 0;
	}
	if (strcmp(argv[1], "fork") == 0) {
		printf("%.9f\n", forks(n));
		return 0;
	}
	if (strcmp(argv[1], "call") == 0) {
		int req, rep;
		pid_t agent;
		double agent_s, direct_s;

		agent = start_agent(&req, &rep);
		t0 = now();
		for (i = 0; i < n; i++)
			if (ask(req, rep, 'a') != 'k')
				return 1;
		agent_s = (now() - t0) / n;
		t0 = now();
		for (i = 0; i < n; i++)
			if (access("/", F_OK) != 0)
				return 1;
		direct_s = (now() - t0) / n;
		kill(agent, SIGKILL);
		waitpid(agent, NULL, 0);
		printf("%.9f %.9f\n", agent_s, direct_s);
		return 0;
	}
	t0 = now();
	for (i = 0; i < n; i++)
		one(strcmp(argv[1], "userns") == 0 ? userns
		    : strcmp(argv[1], "empty") == 0 ? empty : article);
	printf("%.9f\n", (now() - t0) / n);
	return 0;
}
