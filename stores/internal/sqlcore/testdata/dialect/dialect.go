// Package dialect is the least SQL dialect that compiles: the methods of
// sqlcore.Database on "?" placeholders and text ids. Built with the tag
// omit_holders, it lacks Holders, and the build fails naming it.
package dialect

import (
	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

type database struct{}

func (database) Name() string { return "the test store" }

func (database) Syntax() sqlcore.Syntax {
	return sqlcore.Syntax{Mark: func(int) string { return "?" }, JobColumns: "j.job_id"}
}

func (database) InsertSizes() (rows, tags int)         { return 100, 1000 }
func (database) ParseID(raw string) (uuid.UUID, error) { return uuid.Parse(raw) }
func (database) IDText(raw string) string              { return raw }
func (database) Tags(string) ([]string, error)         { return nil, nil }

func (database) PropertiesByPrefixSQL(id uuid.UUID, prefix string) (string, []any) {
	return "SELECT 1", nil
}

// Dialect is the compiled dialect.
var Dialect = sqlcore.Compile[string](database{}, sqlcore.Dialect[string]{})
