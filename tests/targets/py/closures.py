# A closure made at every call of its outer function (pymalloc gives the
# freed one's memory to the next), in two threads for 5 s (cmon checks its
# functions once a second): cmon's --py tests select the closure alone.
# Prints how many calls of it were made.
import threading
import time

made = [0, 0]


def outer(i):
    def inner(x):
        return x + i
    return sum(map(inner, range(3)))


def work(k, end):
    while time.monotonic() < end:
        outer(made[k])
        made[k] += 3


def main():
    end = time.monotonic() + 5
    threads = [threading.Thread(target=work, args=(k, end)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(sum(made))


main()
