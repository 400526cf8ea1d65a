# asyncio for cmon's --py tests: two tasks, each running work(tag, n),
# which awaits step(i) n times; prints what they return, then lingers a
# moment (a task's name is read from the process as cmon writes a record).
import asyncio
import time


async def step(i):
    await asyncio.sleep(0)
    return i


async def work(tag, n):
    total = 0
    for i in range(n):
        total += await step(i)
    return tag, total


async def main():
    a = asyncio.create_task(work("a", 2), name="alpha")
    b = asyncio.create_task(work("b", 3), name="beta")
    print(await a, await b, flush=True)


asyncio.run(main())
time.sleep(0.5)
