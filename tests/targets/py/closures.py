# A closure made at every call of its outer function (pymalloc gives the
# freed one's memory to the next), for 5 s (cmon checks its functions once a
# second): cmon's --py tests select the closure alone.  Prints how many
# calls of it were made.
import time


def outer(i):
    def inner(x):
        return x + i
    return sum(map(inner, range(3)))


def main():
    calls = 0
    end = time.monotonic() + 5
    while time.monotonic() < end:
        outer(calls)
        calls += 3
    print(calls)


main()
