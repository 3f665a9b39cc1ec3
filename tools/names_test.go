package tools_test

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// workspacePatterns are the patterns of every module of go.work.
func workspacePatterns(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../go.work")
	require.NoError(t, err)
	wf, err := modfile.ParseWork("go.work", data, nil)
	require.NoError(t, err)
	var patterns []string
	for _, u := range wf.Use {
		gomod, err := os.ReadFile(filepath.Join("..", u.Path, "go.mod"))
		require.NoError(t, err)
		patterns = append(patterns, modfile.ModulePath(gomod)+"/...")
	}
	return patterns
}

// TestPublicPackageNames: no public package (outside internal/, not a
// command) has the name of a package it imports, so that a user never
// renames one of the two; and each adapter package (metrics/, tracing/,
// coordination/) is named as its directory.
func TestPublicPackageNames(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every package of the workspace")
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: ".."}, workspacePatterns(t)...)
	require.NoError(t, err)
	public := 0
	for _, p := range pkgs {
		elems := strings.Split(p.PkgPath, "/")
		if p.Name == "main" || slices.Contains(elems, "internal") {
			continue
		}
		public++
		for _, imp := range p.Imports {
			require.NotEmpty(t, imp.Name, "the name of %s is loaded", imp.PkgPath)
			assert.NotEqual(t, p.Name, imp.Name, "package %s is named like the package %s it imports", p.PkgPath, imp.PkgPath)
		}
		rel := strings.TrimPrefix(p.PkgPath, "github.com/ratchet-go/ratchet/")
		if top, _, _ := strings.Cut(rel, "/"); top == "metrics" || top == "tracing" || top == "coordination" {
			assert.Equal(t, path.Base(p.PkgPath), p.Name, "adapter package %s is named as its directory", p.PkgPath)
		}
	}
	assert.Greater(t, public, 20, "found the public packages")
}
