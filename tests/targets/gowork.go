// gowork.go: eight goroutines, each calling work(g, 40, "gopher") three
// times; work recurses with a 256-byte array per frame, so the goroutines'
// stacks grow (and are copied) while calls are pending, and goroutines move
// between threads.  work(id, d, name) returns len(name) + id + d.  Prints
// the per-goroutine sums: [138 141 144 147 150 153 156 159], then
// sum([]int{4, 5, 6}) = 15.
package main

import (
	"fmt"
	"sync"
)

//go:noinline
func work(id int, depth int, name string) int {
	var buf [256]byte // grows the stack as depth goes up
	buf[depth%256] = byte(id)
	if depth > 0 {
		return work(id, depth-1, name) + int(buf[depth%256]) - id + 1
	}
	return len(name) + id
}

//go:noinline
func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func main() {
	var wg sync.WaitGroup
	total := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				total[g] += work(g, 40, "gopher")
			}
		}(g)
	}
	wg.Wait()
	fmt.Println(total)
	fmt.Println(sum([]int{4, 5, 6}))
}
