package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// migrateCommand is `ratchet migrate`: the schema of the database --store
// names brought to this binary's version (storeflag.Migrate: every store
// of the registry), and what was applied.
func migrateCommand(fs *flag.FlagSet) action {
	store := fs.String("store", "", "database to migrate: a postgres://... DSN, a mysql://..., sqlserver://..., oracle://... or mongodb://... URL, or sqlite:PATH")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL schema (created when missing)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) int {
		if *store == "" {
			fmt.Fprintln(stderr, "ratchet migrate: --store is required (postgres://..., mysql://..., sqlserver://..., oracle://..., mongodb://... or sqlite:PATH)")
			return 2
		}
		m, err := storeflag.Migrate(ctx, *store, *schema)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "ratchet migrate: %v\n", err)
			return 1
		case m.Note != "":
			fmt.Fprintf(stdout, "%s %s\n", m.Where, m.Note)
		case len(m.Applied) == 0:
			fmt.Fprintf(stdout, "%s is up to date at version %d\n", m.Where, m.Latest)
		default:
			for _, v := range m.Applied {
				fmt.Fprintf(stdout, "%s: applied migration %04d\n", m.Where, v)
			}
			fmt.Fprintf(stdout, "%s is now at version %d\n", m.Where, m.Latest)
		}
		return 0
	}
}
