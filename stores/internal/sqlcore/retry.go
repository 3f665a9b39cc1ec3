package sqlcore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrRetriesExhausted marks the error of an operation that kept failing
// with transient errors until its retries were used up.
var ErrRetriesExhausted = errors.New("retries exhausted")

// Retry runs an operation again while it fails with a transient error: the
// one retry loop of the SQL stores' transactions. The zero value runs once.
type Retry struct {
	// Retries is how many times the operation may run again after its
	// first run; 0 runs it once.
	Retries int
	// Pause is the wait before run n+1, after run n (n from 1) failed;
	// nil waits for nothing.
	Pause func(n int) time.Duration
	// Retryable reports whether an error is transient; nil means none is.
	// The end of the caller's context never is.
	Retryable func(error) bool
	// OnRetry, when not nil, is called before each run after the first.
	OnRetry func()
}

// Do runs fn (with its run number, from 1) until it succeeds, fails with an
// error that is not transient, the retries are used up (the error then
// wraps ErrRetriesExhausted and says how many runs were made), or ctx ends
// (the error joins ctx's).
func (r Retry) Do(ctx context.Context, fn func(n int) error) error {
	for n := 1; ; n++ {
		err := fn(n)
		if err == nil || r.Retryable == nil || !r.Retryable(err) ||
			errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		if n > r.Retries {
			if r.Retries == 0 {
				return err
			}
			return fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, n, err)
		}
		if r.Pause != nil {
			if d := r.Pause(n); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					return errors.Join(ctx.Err(), err)
				case <-t.C:
				}
			}
		}
		if r.OnRetry != nil {
			r.OnRetry()
		}
	}
}

// Doubling returns a pause of first before the second run, doubling with
// each run, capped at most.
func Doubling(first, most time.Duration) func(n int) time.Duration {
	return func(n int) time.Duration {
		return min(first<<min(n-1, 30), most)
	}
}

// ConnectionLost reports an error that means the connection under a
// statement failed or closed: driver.ErrBadConn, sql.ErrConnDone, an EOF or
// a reset on the socket, a network error. The statement's outcome is
// unknown; a transaction that did not reach COMMIT was rolled back by the
// server. A dialect adds its driver's own such errors as also.
func ConnectionLost(err error, also ...error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	for _, e := range append([]error{driver.ErrBadConn, sql.ErrConnDone, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE}, also...) {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// ServerError reads the code and message of a database server's error in
// err's chain (ok false when there is none): what a dialect's
// classification of errors looks at.
type ServerError[C comparable] func(err error) (code C, msg string, ok bool)

// Transient reports whether err leaves a transaction safe to run again:
// never the end of the caller's context; a server error when its code is
// one of codes; any other error when it is ConnectionLost (with also).
func (f ServerError[C]) Transient(err error, codes map[C]bool, also ...error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if code, _, ok := f(err); ok {
		return codes[code]
	}
	return ConnectionLost(err, also...)
}

// Is reports a server error of one of codes whose message names name,
// case folded (any message when name is empty): a duplicate key of a
// given index, say.
func (f ServerError[C]) Is(err error, name string, codes ...C) bool {
	code, msg, ok := f(err)
	return ok && slices.Contains(codes, code) && strings.Contains(strings.ToLower(msg), strings.ToLower(name))
}
