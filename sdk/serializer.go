package ratchet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ratchet-go/ratchet/internal/stored"
	"regexp"
	"strings"
)

// JSONSerializer is the default PayloadSerializer: encoding/json, decoding
// only into the type the task declares.
type JSONSerializer struct{}

// Marshal encodes v as JSON.
func (JSONSerializer) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes JSON data into v. Empty data is an error.
func (JSONSerializer) Unmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty payload")
	}
	return json.Unmarshal(data, v)
}

// DefaultMaxErrorLength bounds stored error text, in bytes.
const DefaultMaxErrorLength = 2000

// DefaultSanitizer is the default ErrorSanitizer (the spec's): the error's
// type name (see ErrorTypeName) and message, with credentials (password=,
// token=, api_key=, secret=, bearer tokens, AWS access key ids) and e-mail
// addresses masked, truncated to MaxLength bytes (zero means
// DefaultMaxErrorLength) on a rune boundary.
type DefaultSanitizer struct {
	MaxLength int
}

var (
	secretPattern = regexp.MustCompile(`(?i)((?:password|passwd|pwd|token|api[_-]?key|secret)\s*[=:]\s*)[^\s&,;]+|(bearer\s+)[A-Za-z0-9._~+/=-]+`)
	awsKeyPattern = regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)
	emailPattern  = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)
)

// Sanitize implements spi.ErrorSanitizer.
func (s DefaultSanitizer) Sanitize(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if name := ErrorTypeName(err); name != "" && !strings.HasPrefix(msg, name) {
		msg = name + ": " + msg
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		if frames := panicFrames(pe.Stack); frames != "" {
			msg += "\n" + frames
		}
	}
	msg = secretPattern.ReplaceAllString(msg, "$1$2***")
	msg = awsKeyPattern.ReplaceAllString(msg, "***")
	msg = emailPattern.ReplaceAllString(msg, "***@***")
	limit := s.MaxLength
	if limit <= 0 {
		limit = DefaultMaxErrorLength
	}
	return stored.Truncate(msg, limit)
}

// panicFrames is the part of a panicking goroutine's stack
// (runtime/debug.Stack, as PanicError.Stack holds it) that says where the
// panic happened: the frames below the runtime's panic call, the
// panicking function first. A stack without that call is returned
// trimmed; an empty one gives "".
//
// DefaultSanitizer stores it below a panic's message, so that the run's
// record and the job's last error carry the trace (within MaxLength).
func panicFrames(stack string) string {
	lines := strings.Split(strings.TrimSpace(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			lines = lines[min(i+2, len(lines)):] // the call and its file line
			break
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// ErrorTypeName is the type of the first error in err's chain (outermost
// first, through Unwrap and errors.Join) that is more than a message or a
// wrapper: "*fs.PathError" for fmt.Errorf("load: %w", pathErr); "" when
// the chain holds only errors.New and fmt.Errorf values and
// DoNotRetryError (their type says nothing the message does not). An
// error whose type has a method ErrorTypeName() string names itself (""
// for no name, and the chain is not searched further). It is the Go form
// of the spec's exception class name.
func ErrorTypeName(err error) string {
	for err != nil {
		switch e := err.(type) {
		case interface{ ErrorTypeName() string }:
			return e.ErrorTypeName()
		case *DoNotRetryError:
			err = e.Err
			continue
		case interface{ Unwrap() []error }:
			if name := fmt.Sprintf("%T", err); !generic[name] {
				return name
			}
			for _, x := range e.Unwrap() {
				if name := ErrorTypeName(x); name != "" {
					return name
				}
			}
			return ""
		}
		if name := fmt.Sprintf("%T", err); !generic[name] {
			return name
		}
		err = errors.Unwrap(err)
	}
	return ""
}

// generic are the error types that carry only a message, or wrap.
var generic = map[string]bool{"*errors.errorString": true, "*fmt.wrapError": true, "*fmt.wrapErrors": true, "*errors.joinError": true}
