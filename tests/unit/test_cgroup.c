/* Unit tests for proc/cgroup: the container ids in cgroup directory names
 * (Docker, containerd, CRI-O, Podman), and cgroup paths read and refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "proc/cgroup.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_container_names(void **state)
{
	static const struct {
		const char *name;
		bool is;
	} cases[] = {
		{ "docker-" ID ".scope", true },       /* Docker, systemd driver */
		{ ID, true },                          /* Docker/Kubernetes, cgroupfs */
		{ "cri-containerd-" ID ".scope", true },
		{ "crio-" ID ".scope", true },
		{ "libpod-" ID ".scope", true },       /* Podman, systemd */
		{ "libpod-" ID, true },                /* Podman, cgroupfs */
		{ "libpod-conmon-" ID ".scope", false }, /* conmon, not the container */
		{ "libpod-conmon-" ID, false },
		{ "docker-" ID "0.scope", false },     /* 65 digits */
		{ "docker-0123ABCD.scope", false },
		{ "system.slice", false },
		{ "kubepods-burstable-pod12345678_1234.slice", false },
		{ ".scope", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = 0;
		const char *id = cgroup__container_of(cases[i].name, &len);

		if (!cases[i].is) {
			if (id)
				fail_msg("%s: taken for container %s", cases[i].name, id);
			continue;
		}
		if (!id)
			fail_msg("%s: not taken for a container", cases[i].name);
		assert_int_equal(len, 64);
		assert_memory_equal(id, ID, 64);
	}
}

static void test_resolve_refuses(void **state)
{
	struct cgroup_sel s;

	(void)state;
	assert_int_equal(cgroup__resolve("/nonexistent/cgroup", &s), -ENOENT);
	assert_int_equal(cgroup__resolve("/etc/hostname", &s), -ENOTDIR);
	assert_int_equal(cgroup__resolve("/tmp", &s), -EINVAL); /* not a cgroup */
	assert_int_equal(cgroup__find_container("xyz", &s), -EINVAL);
	assert_int_equal(cgroup__find_container("0123", &s) == -ENOENT ||
				 cgroup__find_container("0123", &s) == -ENODEV,
			 1);
}

static void test_of_pid(void **state)
{
	char buf[4096];
	int err;

	(void)state;
	err = cgroup__of_pid(getpid(), buf, sizeof(buf));
	if (err == -ENOENT)
		skip(); /* no cgroup v2 line here */
	assert_int_equal(err, 0);
	assert_int_equal(buf[0], '/');
	assert_int_equal(cgroup__of_pid(0x7ffffff0, buf, sizeof(buf)), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_names),
		cmocka_unit_test(test_resolve_refuses),
		cmocka_unit_test(test_of_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
