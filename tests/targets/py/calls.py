# Python calls for cmon's --py tests: exact counts and values.
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Shape:
    def area(self, w, h=2.0):
        return w * h


def kinds(i, f, s, b, none, raw):
    return s


def boom(x):
    raise ValueError(x)


def catcher():
    try:
        boom(7)
    except ValueError:
        return "caught"


def gen(n):
    for i in range(n):
        yield i


def main():
    print(fib(10))
    print(Shape().area(3, h=1.5))
    print(kinds(-42, 2.5, "hello", True, None, b"ab\x00c"))
    print(catcher())
    print(sum(gen(3)))
    print([len("x" * 100)], {"a": 1})
    sys.stdout.flush()


if __name__ == "__main__":
    main()
