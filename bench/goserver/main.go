// Command goserver is the benchmark's speed-of-light peer: the primes app's
// three routes (GET /, /primes/<n>, /fib/<n>) with the same algorithms as
// apps/primes.py, served by Go's net/http on every core.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
)

const maxPrimesN = 50000
const maxFibN = 32

// primesUpTo divides every candidate by every smaller number, like the
// Python app: the point is the same amount of work, not a fast sieve.
func primesUpTo(n int) []int {
	primes := []int{}
	for candidate := 2; candidate <= n; candidate++ {
		isPrime := true
		for divisor := 2; divisor < candidate; divisor++ {
			if candidate%divisor == 0 {
				isPrime = false
				break
			}
		}
		if isPrime {
			primes = append(primes, candidate)
		}
	}
	return primes
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// parseBound reads the path's last part as an int in 0..limit, or writes a
// 400 with the reason and returns false.
func parseBound(w http.ResponseWriter, r *http.Request, prefix string, limit int) (int, bool) {
	text := strings.TrimPrefix(r.URL.Path, prefix)
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 || strings.HasPrefix(text, "+") {
		http.Error(w, "400 n must be a non-negative integer", http.StatusBadRequest)
		return 0, false
	}
	if n > limit {
		http.Error(w, fmt.Sprintf("400 n must be at most %d", limit), http.StatusBadRequest)
		return 0, false
	}
	return n, true
}

func writeJSON(w http.ResponseWriter, value any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if err := json.NewEncoder(w).Encode(value); err != nil {
		log.Print(err)
	}
}

func main() {
	address := flag.String("address", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8888, "TCP port")
	flag.Parse()

	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "Hello, world\n")
	})
	http.HandleFunc("/primes/", func(w http.ResponseWriter, r *http.Request) {
		if n, ok := parseBound(w, r, "/primes/", maxPrimesN); ok {
			writeJSON(w, map[string][]int{"primes": primesUpTo(n)})
		}
	})
	http.HandleFunc("/fib/", func(w http.ResponseWriter, r *http.Request) {
		if n, ok := parseBound(w, r, "/fib/", maxFibN); ok {
			writeJSON(w, map[string]int{"n": n, "fib": fib(n)})
		}
	})
	listen := fmt.Sprintf("%s:%d", *address, *port)
	fmt.Printf("serving on http://%s/\n", listen)
	log.Fatal(http.ListenAndServe(listen, nil))
}
