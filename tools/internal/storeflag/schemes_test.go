package storeflag

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every spelling of --store names one scheme of the registry, and only
// one; an unknown one is an error listing the spellings.
func TestSchemeOf(t *testing.T) {
	for spec, want := range map[string]string{
		"postgres://u@h:5432/db": "postgres", "postgresql://u@h/db": "postgres",
		"mysql://root@h:3306/db": "mysql", "sqlserver://sa:pw@h:1433?database=d": "sqlserver",
		"oracle://u:pw@h:1521/svc": "oracle", "mongodb://h:27017/db": "mongodb", "mongodb+srv://h/db": "mongodb",
		"sqlite": "sqlite", "": "sqlite", "sqlite:ratchet.db": "sqlite", "sqlite:///var/lib/r.db": "sqlite",
		"memory": "memory",
	} {
		n := 0
		for _, s := range schemes {
			if s.matches(spec) {
				n++
				assert.Equal(t, want, s.name, spec)
			}
		}
		assert.Equal(t, 1, n, "%q matches one scheme", spec)
	}
	_, err := schemeOf("redis://h")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown --store "redis://h"`)
	assert.Contains(t, err.Error(), "mongodb://")

	_, err = Migrate(context.Background(), "memory", "")
	assert.ErrorContains(t, err, "a memory store has no schema to migrate")
}
