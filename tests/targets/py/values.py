# Python values for cmon's --py tests: what a call's record shows.
# Prints "ok" (each call's result checked here), then lingers a moment:
# an enum member's name is read from the process as cmon writes the record.
import enum
import http
import time


def closure(x):
    def inner():
        return x
    return inner()


def many(p1, p2, p3, p4, p5, p6, p7, p8=8, *rest, k1, k2=22, **kw):
    return p1 + p8 + k2 + len(rest) + len(kw)


def status(code):
    return code


def gen():
    yield 5
    yield 6


def fails(n):
    return int("x" * n)


class Color(enum.IntEnum):
    RED = 1


def main():
    assert closure(41) == 41
    assert many(1, 2, 3, 4, 5, 6, 7, k1=10) == 31
    assert many(1, 2, 3, 4, 5, 6, 7, 9, 10, 11, k1=1, k2=2, extra=3) == 15
    assert status(http.HTTPStatus.NOT_FOUND) == 404
    assert status(Color.RED) == 1
    assert list(gen()) == [5, 6]
    try:
        fails(2)
    except ValueError:
        pass
    print("ok", flush=True)
    time.sleep(0.5)


main()
