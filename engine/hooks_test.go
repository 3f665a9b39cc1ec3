package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// recordingHook writes what it is told, and whether the engine claimed
// at that moment.
type recordingHook struct {
	engine.NoOpHook
	name  string
	mu    *sync.Mutex
	calls *[]string
	fail  error
}

func (h recordingHook) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.calls = append(*h.calls, h.name+" "+s)
}

func (h recordingHook) BeforeStart(context.Context) error { h.add("before start"); return h.fail }
func (h recordingHook) AfterStart(context.Context)        { h.add("after start") }
func (h recordingHook) BeforeStop(context.Context)        { h.add("before stop") }
func (h recordingHook) AfterStop(context.Context)         { h.add("after stop") }

func TestLifecycleHooksRunInOrder(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var calls []string
	ran := make(chan struct{}, 1)
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { ran <- struct{}{}; return nil })
	eng, err := engine.New(memory.New(), engine.Options{
		Client: ratchet.ClientOptions{Logger: quiet},
		Hooks: []engine.LifecycleHook{
			recordingHook{name: "a", mu: &mu, calls: &calls}, recordingHook{name: "b", mu: &mu, calls: &calls}},
	}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	_, err = task.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	<-ran // the engine ran a job between the start and the stop hooks
	require.NoError(t, eng.Stop(ctx))
	assert.Equal(t, []string{"a before start", "b before start", "a after start", "b after start",
		"a before stop", "b before stop", "a after stop", "b after stop"}, calls)

	// A failing BeforeStart stops Start before anything runs, and the
	// engine can start again.
	calls = nil
	boom := errors.New("config not loaded")
	failing := &recordingHook{name: "c", mu: &mu, calls: &calls, fail: boom}
	eng, err = engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, Hooks: []engine.LifecycleHook{failing}}, task)
	require.NoError(t, err)
	err = eng.Start(ctx)
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, eng.Stop(ctx), engine.ErrNotStarted, "the engine did not start")
	failing.fail = nil
	require.NoError(t, eng.Start(ctx), "it can be started again")
	require.NoError(t, eng.Stop(ctx))
	assert.Equal(t, []string{"c before start", "c before start", "c after start", "c before stop", "c after stop"}, calls)

	_, err = engine.New(memory.New(), engine.Options{Hooks: []engine.LifecycleHook{nil}}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}
