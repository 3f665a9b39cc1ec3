package engine_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The worker takes the client's configuration once, in Options.Client: no
// field of Options repeats one of ratchet.ClientOptions, so that a web
// process and a worker cannot be configured apart by accident.
func TestOptionsRepeatNoClientOption(t *testing.T) {
	client := map[string]bool{}
	ct := reflect.TypeFor[ratchet.ClientOptions]()
	for i := range ct.NumField() {
		client[ct.Field(i).Name] = true
	}
	ot := reflect.TypeFor[engine.Options]()
	for i := range ot.NumField() {
		f := ot.Field(i)
		if f.IsExported() {
			assert.False(t, client[f.Name], "engine.Options.%s repeats ratchet.ClientOptions.%s: read it from Options.Client", f.Name, f.Name)
		}
	}
	f, ok := ot.FieldByName("Client")
	require.True(t, ok)
	assert.Equal(t, ct, f.Type)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// An engine sets timers on its clock: a Client.Clock that is no
// clockwork.Clock is refused with the reason.
func TestEngineRefusesAClockWithoutTimers(t *testing.T) {
	_, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Clock: wallClock{}}})
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "Client.Clock is a engine_test.wallClock: an engine needs a clockwork.Clock")
}
