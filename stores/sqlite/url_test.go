package sqlite

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPathFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"sqlite:ratchet.db":               "ratchet.db",
		"sqlite://ratchet.db":             "ratchet.db",
		"sqlite:///var/lib/ratchet.db":    "/var/lib/ratchet.db",
		"sqlite:/var/lib/ratchet.db":      "/var/lib/ratchet.db",
		"sqlite:data/with space/chaos.db": "data/with space/chaos.db",
	} {
		got, err := PathFromURL(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.True(t, IsURL(in), in)
	}
	for _, in := range []string{"sqlite:", "sqlite://", "sqlite", "postgres://x/y", ""} {
		_, err := PathFromURL(in)
		assert.Error(t, err, in)
	}
	assert.False(t, IsURL("sqlite"))
}
