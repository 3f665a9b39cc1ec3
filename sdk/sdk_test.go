package ratchet_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestBackoffDelay(t *testing.T) {
	cases := []struct {
		kind    spi.BackoffKind
		param   time.Duration
		attempt int
		want    time.Duration
	}{
		{spi.BackoffNone, time.Second, 1, 0},
		{"", time.Second, 3, 0},
		{spi.BackoffFixed, 3 * time.Second, 1, 3 * time.Second},
		{spi.BackoffFixed, 3 * time.Second, 9, 3 * time.Second},
		{spi.BackoffExponential, time.Second, 1, time.Second},
		{spi.BackoffExponential, time.Second, 2, 2 * time.Second},
		{spi.BackoffExponential, time.Second, 3, 4 * time.Second},
		{spi.BackoffExponential, time.Second, 17, 65536 * time.Second},
		{spi.BackoffExponential, time.Second, 18, 24 * time.Hour},
		{spi.BackoffExponential, time.Second, 1000, 24 * time.Hour},
		{spi.BackoffExponential, 48 * time.Hour, 1, 24 * time.Hour},
		{spi.BackoffExponential, 0, 5, 0},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.kind.Delay(tc.param, tc.attempt), "%s %s attempt %d", tc.kind, tc.param, tc.attempt)
	}
}

func TestEffectivePriority(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		p     spi.Priority
		wait  time.Duration
		boost time.Duration
		want  int64
	}{
		{"fresh", spi.PriorityLow, 0, 15 * time.Minute, 1},
		{"just under one interval", spi.PriorityLow, 15*time.Minute - time.Microsecond, 15 * time.Minute, 1},
		{"one interval", spi.PriorityLow, 15 * time.Minute, 15 * time.Minute, 2},
		{"an hour", spi.PriorityLowest, time.Hour, 15 * time.Minute, 4},
		{"not yet due", spi.PriorityHigh, -time.Hour, 15 * time.Minute, 3},
		{"aging disabled", spi.PriorityLowest, 10 * time.Hour, 0, 0},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, spi.EffectivePriority(tc.p, now.Add(-tc.wait), now, tc.boost), tc.name)
	}
}

func TestDoNotRetryFoundAnywhereInTheChain(t *testing.T) {
	base := errors.New("bad input")
	deep := fmt.Errorf("a: %w", fmt.Errorf("b: %w", fmt.Errorf("c: %w", ratchet.DoNotRetry(base))))
	assert.True(t, ratchet.IsDoNotRetry(deep))
	assert.ErrorIs(t, deep, base)
	assert.False(t, ratchet.IsDoNotRetry(base))
	assert.True(t, ratchet.IsDoNotRetry(errors.Join(errors.New("x"), ratchet.DoNotRetry(nil))))
}

func TestSanitizer(t *testing.T) {
	s := ratchet.DefaultSanitizer{MaxLength: 40}
	got := s.Sanitize(errors.New("login failed password=hunter2 token: abc.def"))
	assert.NotContains(t, got, "hunter2")
	assert.NotContains(t, got, "abc.def")
	assert.LessOrEqual(t, len(got), 40)
	long := ratchet.DefaultSanitizer{}.Sanitize(errors.New(strings.Repeat("é", 3000)))
	assert.LessOrEqual(t, len(long), ratchet.DefaultMaxErrorLength)
	assert.True(t, strings.HasPrefix(long, "é"))
	assert.Empty(t, ratchet.DefaultSanitizer{}.Sanitize(nil))
	assert.Contains(t, ratchet.DefaultSanitizer{}.Sanitize(errors.New("auth: Bearer eyJhbGciOi.x.y failed")), "Bearer ***")
}

func TestTaskCallAndValidate(t *testing.T) {
	task := ratchet.NewTask("double", func(ctx context.Context, n int) (int, error) { return 2 * n, nil })
	got, err := task.Call(context.Background(), 21)
	require.NoError(t, err)
	assert.Equal(t, 42, got)

	res, err := task.Execute(context.Background(), []byte(`"not an int"`), ratchet.JSONSerializer{})
	assert.Nil(t, res)
	var dec *ratchet.PayloadDecodeError
	require.ErrorAs(t, err, &dec)
	assert.True(t, ratchet.IsDoNotRetry(err))

	assert.ErrorIs(t, ratchet.NewTask[int, int]("", nil).Validate(), ratchet.ErrInvalidArgument)
	assert.ErrorIs(t, ratchet.NewTask[int, int]("x", nil).Validate(), ratchet.ErrInvalidArgument)
	var nilTask *ratchet.Task[int, int]
	assert.ErrorIs(t, nilTask.Validate(), ratchet.ErrInvalidArgument)
	_, err = nilTask.Call(context.Background(), 1)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

func TestClientOptionsValidation(t *testing.T) {
	_, err := ratchet.NewClient(nil, ratchet.ClientOptions{})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

func TestTypeName(t *testing.T) {
	type local struct{}
	assert.Equal(t, "github.com/ratchet-go/ratchet/sdk_test.local", ratchet.TypeName(local{}))
	assert.Equal(t, "int", ratchet.TypeName(1))
	assert.Equal(t, "[]string", ratchet.TypeName([]string{}))
	assert.Equal(t, "", ratchet.TypeName(nil))
}

func TestJobContext(t *testing.T) {
	j := &spi.Job{TaskName: "t", Params: map[string]string{"k": "v"}, Priority: spi.PriorityHigh, Attempts: 1}
	jc := ratchet.NewJobContext(j, nil)
	ctx := ratchet.ContextWithJob(context.Background(), jc)
	got, ok := ratchet.JobFromContext(ctx)
	require.True(t, ok)
	assert.Equal(t, "v", got.Param("k"))
	assert.Equal(t, 2, got.Run, "one failed attempt so far: this is run 2")
	j.Params["k"] = "changed"
	assert.Equal(t, "v", got.Param("k"), "params are copied")
	p := got.Params()
	p["k"] = "mutated"
	assert.Equal(t, "v", got.Param("k"))
}

type quotaError struct{ Limit int }

func (e *quotaError) Error() string { return fmt.Sprintf("quota of %d reached", e.Limit) }

// The default sanitizer keeps the error's type name (of the first error of
// the chain that is more than a message), strips credentials and e-mail
// addresses, and truncates to 2,000 bytes.
func TestSanitizerAsTheSpecSays(t *testing.T) {
	s := ratchet.DefaultSanitizer{}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("boom"), "boom"},
		{ratchet.DoNotRetry(errors.New("card declined")), "do not retry: card declined"},
		{fmt.Errorf("charge: %w", &quotaError{Limit: 3}), "*ratchet_test.quotaError: charge: quota of 3 reached"},
		{ratchet.DoNotRetry(fmt.Errorf("load: %w", &fs.PathError{Op: "open", Path: "/etc/x", Err: fs.ErrNotExist})),
			"*fs.PathError: do not retry: load: open /etc/x: file does not exist"},
		{errors.Join(errors.New("a"), &quotaError{Limit: 1}), "*ratchet_test.quotaError: a\nquota of 1 reached"},
		{errors.New("mail to ann.lee+x@example.co.uk failed"), "mail to ***@*** failed"},
		{errors.New("api_key=abc123 rejected; key AKIAABCDEFGHIJKLMNOP"), "api_key=*** rejected; key ***"},
	} {
		assert.Equal(t, tc.want, s.Sanitize(tc.err))
	}
	assert.Len(t, s.Sanitize(errors.New(strings.Repeat("x", 5000))), 2000)
}

// A panic's stored error carries the frames where it happened, below its
// message, without the runtime's and the recovering code's frames.
func TestSanitizeKeepsAPanicsFrames(t *testing.T) {
	stack := "goroutine 7 [running]:\nruntime/debug.Stack()\n\t/go/src/runtime/debug/stack.go:26 +0x5e\n" +
		"example.com/engine.runSafely.func1()\n\t/src/engine/executor.go:207 +0x7a\n" +
		"panic({0x9e1c40?, 0xc0001a2b40?})\n\t/go/src/runtime/panic.go:787 +0x132\n" +
		"example.com/app.charge(...)\n\t/src/app/charge.go:12 +0x44 password=hunter2\n"
	got := ratchet.DefaultSanitizer{}.Sanitize(&ratchet.PanicError{Value: "nil map", Stack: stack})
	assert.Equal(t, "*ratchet.PanicError: task panicked: nil map\nexample.com/app.charge(...)\n\t/src/app/charge.go:12 +0x44 password=***", got)
	assert.Equal(t, "*ratchet.PanicError: task panicked: x", ratchet.DefaultSanitizer{}.Sanitize(&ratchet.PanicError{Value: "x"}))
}
