# Python calls for cmon break --py tests: known arguments, known callers.
# Prints "8" then "10.0", exits with 7.
import sys


def area(w, h, label="box"):
    return w * h


class Grid:
    def cell(self, x, y):
        return area(x, y, label="cell")


def outer(n):
    total = 0
    for i in range(n):
        total += Grid().cell(i, i + 1)
    return total


def main():
    print(outer(3))
    print(area(2.5, 4, "flat"))
    sys.stdout.flush()
    sys.exit(7)


main()
