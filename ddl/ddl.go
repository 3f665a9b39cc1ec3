package ddl

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// files holds one folder of migrations per dialect.
//
//go:embed mysql/*.sql oracle/*.sql postgresql/*.sql sqlite/*.sql sqlserver/*.sql
var files embed.FS

// Migration is one versioned schema change of one dialect.
type Migration struct {
	// Version is the schema version the migration brings the database to,
	// taken from the file name (0001_init.sql is version 1).
	Version int
	// Name is the file name without the version prefix and the .sql
	// extension, e.g. "init".
	Name string
	// SQL is the file's content: plain SQL statements separated by
	// semicolons.
	SQL string
	// Compatible: code of an older version runs against the schema this
	// migration brings unchanged (it is expand-only: it adds tables,
	// columns that are nullable or have a default, and indexes, and
	// drops, renames or retypes nothing). The file says so with a line
	// holding only CompatibleMark, and records its version with
	// compatible = 1 in ratchet_schema_version, so that a store of an
	// older version opening the database finds it there.
	Compatible bool
}

// CompatibleMark is the line that marks a migration compatible.
const CompatibleMark = "-- ratchet:compatible"

// compatibleMark matches CompatibleMark on a line of its own.
var compatibleMark = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(CompatibleMark) + `\s*$`)

// createTable matches the name of a table a statement creates.
var createTable = regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([A-Za-z0-9_]+)"?`)

// Tables returns the tables the migration creates (its CREATE TABLE
// statements), in lower case, in the order they appear.
func (m Migration) Tables() []string {
	var out []string
	for _, g := range createTable.FindAllStringSubmatch(m.SQL, -1) {
		out = append(out, strings.ToLower(g[1]))
	}
	return out
}

// fileName matches NNNN_name.sql.
var fileName = regexp.MustCompile(`^([0-9]{4})_([A-Za-z0-9_]+)\.sql$`)

// Dialects returns the names of the dialects that have migrations, sorted.
func Dialects() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Migrations returns the migrations of dialect (for example "sqlite") in
// ascending version order. It fails for an unknown dialect, naming it, and
// for a folder whose files are misnamed or whose versions do not run 1, 2,
// 3... without gaps.
func Migrations(dialect string) ([]Migration, error) {
	if dialect == "" || strings.ContainsAny(dialect, `/\.`) || !fs.ValidPath(dialect) {
		return nil, unknownDialect(dialect)
	}
	entries, err := fs.ReadDir(files, dialect)
	if err != nil {
		return nil, unknownDialect(dialect)
	}
	var migs []Migration
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("ddl: %s: file %q is not named NNNN_name.sql", dialect, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := files.ReadFile(dialect + "/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("ddl: %s: %w", dialect, err)
		}
		migs = append(migs, Migration{Version: v, Name: m[2], SQL: string(b), Compatible: compatibleMark.Match(b)})
	}
	slices.SortFunc(migs, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range migs {
		if m.Version != i+1 {
			return nil, fmt.Errorf("ddl: %s: migration versions must run 1, 2, 3... without gaps or duplicates; found version %d at position %d", dialect, m.Version, i+1)
		}
	}
	if len(migs) == 0 {
		return nil, unknownDialect(dialect)
	}
	return migs, nil
}

// Latest returns the newest schema version of dialect: the version of its
// last migration, or 0 when the dialect is unknown.
func Latest(dialect string) int {
	migs, err := Migrations(dialect)
	if err != nil || len(migs) == 0 {
		return 0
	}
	return migs[len(migs)-1].Version
}

// Versions returns the schema versions of dialect in order (1, 2, ...
// Latest), or nil when the dialect is unknown: what a fully migrated
// database records.
func Versions(dialect string) []int {
	migs, err := Migrations(dialect)
	if err != nil {
		return nil
	}
	out := make([]int, len(migs))
	for i, m := range migs {
		out[i] = m.Version
	}
	return out
}

func unknownDialect(dialect string) error {
	return fmt.Errorf("ddl: unknown dialect %q (known: %s)", dialect, strings.Join(Dialects(), ", "))
}

// CompatibleSince returns the version of the first migration of dialect
// marked compatible, which adds ratchet_schema_version's compatible
// column: code at that version or later reads which later versions are
// compatible. It returns 0 for an unknown dialect or one without any.
func CompatibleSince(dialect string) int {
	migs, err := Migrations(dialect)
	if err != nil {
		return 0
	}
	for _, m := range migs {
		if m.Compatible {
			return m.Version
		}
	}
	return 0
}
