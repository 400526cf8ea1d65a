# Depth for cmon's --py tests: leaf() under N frames of deep() (not
# selected), then rec(N), selected, N deep; prints each result.
import sys

sys.setrecursionlimit(5000)


def leaf(x):
    return x + 1


def deep(n):
    return leaf(n) if n == 0 else deep(n - 1)


def rec(n):
    return 0 if n == 0 else rec(n - 1) + 1


for n in (70, 100, 500):
    print(deep(n))
print(rec(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
