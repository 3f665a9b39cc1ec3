package dashboard

import (
	"errors"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// requestError is a problem with the request (a filter, an id), answered
// 400; it matches ratchet.ErrInvalidArgument.
type requestError struct{ err error }

func (e requestError) Error() string { return e.err.Error() }
func (e requestError) Unwrap() error { return e.err }

// Is makes a requestError match ratchet.ErrInvalidArgument.
func (e requestError) Is(target error) bool { return target == ratchet.ErrInvalidArgument }

// badRequest marks err as a problem with the request.
func badRequest(err error) error { return requestError{err} }

// isBadRequest reports whether err is a problem with the request.
func isBadRequest(err error) bool { return errors.Is(err, ratchet.ErrInvalidArgument) }

// rfc formats t as RFC 3339 (UTC), empty for the zero time.
func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
