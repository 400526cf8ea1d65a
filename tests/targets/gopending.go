// gopending.go: Go calls that are still pending when a trace ends.
//
//	gopending block N   N goroutines enter block(i) and wait forever;
//	                    main prints "blocked N" and exits: N calls pending.
//	gopending block N wait   the same, between a "ready PID" line and a
//	                    line read from stdin; after "blocked N" it runs
//	                    on until stdin ends (-p: calls pending at detach).
//	gopending loop N    N goroutines call spin(i) (which calls leaf)
//	                    until killed; prints "ready" once all have run.
//	gopending deep N    deep(N): recursion with 1 KiB frames, so the
//	                    goroutine's stack grows (runtime.morestack) many
//	                    times on the way down; prints deep's result,
//	                    N*(N+1)/2.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync"
)

//go:noinline
func block(i int, entered *sync.WaitGroup, never chan int) int {
	entered.Done()
	return <-never + i
}

//go:noinline
func leaf(i int) int { return i * 2 }

//go:noinline
func spin(i int) int { return leaf(i) + 1 }

//go:noinline
func deep(d int) int {
	var buf [1024]byte // grows the stack as d goes up
	buf[d%1024] = byte(d)
	if d == 0 {
		return int(buf[0])
	}
	return deep(d-1) + d + int(buf[d%1024]) - int(byte(d))
}

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	switch os.Args[1] {
	case "block":
		var entered sync.WaitGroup
		never := make(chan int)
		wait := len(os.Args) > 3 && os.Args[3] == "wait"
		in := bufio.NewReader(os.Stdin)
		if wait {
			fmt.Printf("ready %d\n", os.Getpid())
			in.ReadString('\n')
		}
		entered.Add(n)
		for i := 0; i < n; i++ {
			go block(i, &entered, never)
		}
		entered.Wait()
		fmt.Printf("blocked %d\n", n)
		if wait {
			in.ReadString(0) // until stdin ends
		}
	case "loop":
		var ran sync.WaitGroup
		ran.Add(n)
		for i := 0; i < n; i++ {
			go func(i int) {
				spin(i)
				ran.Done()
				for {
					spin(i)
				}
			}(i)
		}
		ran.Wait()
		fmt.Println("ready")
		select {}
	case "deep":
		fmt.Println(deep(n))
	}
}
