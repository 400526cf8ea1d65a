# Python ints at and beyond 64 bits, for cmon's --py tests.
def ints(a, b, c, d, e):
    return 2 ** 100


ints(2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, -2 ** 100)
print("ok")
