# A class's __init__ called 100 times through `Point(i)` and 100 times
# through `Sub(i)`, a subclass that inherits it (cmon's --py tests).
class Point:
    def __init__(self, x):
        self.x = x


class Sub(Point):
    pass


def main():
    print(sum(Point(i).x for i in range(100)), sum(Sub(i).x for i in range(100)))


main()
