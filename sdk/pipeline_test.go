package ratchet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// brackets is a codec that brackets the bytes, and fails on a marked payload.
type brackets struct{ name string }

func (b brackets) Encode(_ context.Context, _ ratchet.PayloadRef, d []byte) ([]byte, error) {
	if string(d) == `"fail"` {
		return nil, errors.New("refused by " + b.name)
	}
	return append(append([]byte(b.name+"("), d...), ')'), nil
}

func (b brackets) Decode(_ context.Context, _ ratchet.PayloadRef, d []byte) ([]byte, error) {
	p := len(b.name) + 1
	if len(d) < p+1 || string(d[:p]) != b.name+"(" {
		return nil, errors.New("not encoded by " + b.name)
	}
	return d[p : len(d)-1], nil
}

func TestPipeline(t *testing.T) {
	ctx := context.Background()
	p, err := ratchet.NewPipeline(nil, 8, brackets{"a"}, brackets{"b"})
	require.NoError(t, err)
	b, err := p.Encode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceTask}, "t", "hi")
	require.NoError(t, err)
	assert.Equal(t, `b(a("hi"))`, string(b), "codecs in order after the serializer")
	var s string
	require.NoError(t, p.Decode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceTask}, b, &s))
	assert.Equal(t, "hi", s)

	_, err = p.Encode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceTask}, "t", "too long")
	var tooLarge *ratchet.PayloadTooLargeError
	require.ErrorAs(t, err, &tooLarge, "10 serialized bytes over 8")
	assert.Equal(t, "task", tooLarge.Surface)
	_, err = p.Encode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceResult}, "t", "results are not limited")
	require.NoError(t, err)
	_, err = p.Encode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceTask}, "t", "fail")
	assert.ErrorContains(t, err, `encode task payload of task "t": refused by a`)
	err = p.Decode(ctx, ratchet.PayloadRef{Surface: ratchet.SurfaceTask}, []byte(`a("x")`), &s)
	assert.ErrorContains(t, err, "decode task payload: not encoded by b")

	_, err = ratchet.NewPipeline(nil, 0, nil)
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = ratchet.NewPipeline(nil, -1)
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

func TestChainOrder(t *testing.T) {
	var trace []string
	mw := func(name string) ratchet.InsertMiddleware {
		return func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
			trace = append(trace, name)
			return next(ctx, jobs)
		}
	}
	end := func(context.Context, []*ratchet.Job) ([]spi.InsertResult, error) {
		trace = append(trace, "store")
		return nil, nil
	}
	_, _ = ratchet.ChainInsert(end, mw("first"), mw("second"))(context.Background(), nil)
	assert.Equal(t, []string{"first", "second", "store"}, trace)

	var work []string
	wmw := func(name string) ratchet.WorkMiddleware {
		return func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
			work = append(work, name)
			return next(ctx, j)
		}
	}
	_, _ = ratchet.ChainWork(func(context.Context, *ratchet.Job) (any, error) { work = append(work, "body"); return nil, nil },
		wmw("first"), wmw("second"))(context.Background(), nil)
	assert.Equal(t, []string{"first", "second", "body"}, work)
}
