package release

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workspace writes a two-module workspace into a new git repository: lib,
// and app, which requires lib at v0.0.0 through a replace line, as the
// repository's modules did before their first release.
func workspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.work":                   "go 1.26.0\n\nuse (\n\t./lib\n\t./app\n\t./internal/helper\n)\n",
		"lib/go.mod":                "module example.com/proj/lib\n\ngo 1.26.0\n\nrequire example.com/proj/internal/helper v0.0.0\n\nreplace example.com/proj/internal/helper => ../internal/helper\n",
		"lib/lib.go":                "// Package lib greets.\npackage lib\n\nimport \"example.com/proj/internal/helper\"\n\n// Greet greets.\nfunc Greet(name string) string { return helper.Hello() + \", \" + name }\n",
		"app/go.mod":                "module example.com/proj/app\n\ngo 1.26.0\n\nrequire example.com/proj/lib v0.0.0\n\nrequire example.com/proj/internal/helper v0.0.0 // indirect\n\nreplace example.com/proj/lib => ../lib\n\nreplace example.com/proj/internal/helper => ../internal/helper\n",
		"app/main.go":               "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/proj/lib\"\n)\n\nfunc main() { fmt.Println(lib.Greet(\"you\")) }\n",
		"internal/helper/go.mod":    "module example.com/proj/internal/helper\n\ngo 1.26.0\n",
		"internal/helper/helper.go": "// Package helper is shared.\npackage helper\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
		"CHANGELOG.md":              "# Changelog\n\n## v0.2.0\n\nFirst.\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	gitRun(t, root, "init", "-q", "-b", "main")
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-q", "-m", "start")
	return root
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func TestWorkspaceListsTheModulesOfGoWork(t *testing.T) {
	root := workspace(t)
	mods, err := Workspace(root)
	require.NoError(t, err)
	assert.Equal(t, []Module{
		{Dir: "lib", Path: "example.com/proj/lib"},
		{Dir: "app", Path: "example.com/proj/app"},
		{Dir: "internal/helper", Path: "example.com/proj/internal/helper"},
	}, mods)
	assert.Equal(t, "internal/helper/v1.2.3", mods[2].Tag("v1.2.3"))
	assert.True(t, mods[0].Public())
	assert.False(t, mods[2].Public())
}

func TestRewriteSetsEverySiblingRequirementAndKeepsTheRest(t *testing.T) {
	root := workspace(t)
	mods, err := Workspace(root)
	require.NoError(t, err)
	changed, err := Rewrite(root, mods, "v0.2.0")
	require.NoError(t, err)
	require.Len(t, changed, 2, "lib and app require siblings; helper requires none")
	app := string(changed["app"])
	assert.Contains(t, app, "example.com/proj/lib v0.2.0")
	assert.Contains(t, app, "example.com/proj/internal/helper v0.2.0 // indirect")
	assert.Contains(t, app, "replace example.com/proj/lib => ../lib", "the replace lines stay, for development")
	dropped, err := dropReplaces(changed["app"])
	require.NoError(t, err)
	assert.NotContains(t, string(dropped), "replace")

	// Written back, a second rewrite finds nothing to change.
	for dir, data := range changed {
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "go.mod"), data, 0o644))
	}
	again, err := Rewrite(root, mods, "v0.2.0")
	require.NoError(t, err)
	assert.Empty(t, again)
}

func TestRequirementDiffNamesWhatTidyWouldChange(t *testing.T) {
	a := []byte("module m\n\ngo 1.26\n\nrequire (\n\tx.org/a v1.0.0\n\tx.org/b v1.0.0 // indirect\n)\n")
	assert.Empty(t, requirementDiff(a, a))
	b := []byte("module m\n\ngo 1.26\n\nrequire (\n\tx.org/a v1.0.1\n\tx.org/c v1.0.0\n)\n")
	assert.Equal(t, "adds x.org/c v1.0.0; changes x.org/a v1.0.0 to v1.0.1; drops x.org/b v1.0.0 // indirect", requirementDiff(a, b))
}

// A release of the synthetic workspace: the dry run changes nothing and
// prints one tag per module; the release builds every module through the
// proxy, commits the rewrite and tags; the next release reports the API
// changes since it.
func TestRunDryRunThenReleaseThenTheNextRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules through a file proxy")
	}
	root := workspace(t)
	ctx := context.Background()
	var out bytes.Buffer
	require.NoError(t, Run(ctx, Options{Root: root, Version: "v0.2.0", DryRun: true, Out: &out}))
	assert.Empty(t, gitRun(t, root, "status", "--porcelain"), "a dry run changes no tracked file")
	assert.Empty(t, gitRun(t, root, "tag", "-l"), "a dry run creates no tag")
	for _, tag := range []string{"lib/v0.2.0", "app/v0.2.0", "internal/helper/v0.2.0"} {
		assert.Contains(t, out.String(), "would tag "+tag+"\n")
	}
	assert.Contains(t, out.String(), "built example.com/proj/app@v0.2.0 from the proxy, no replace directive")
	assert.Contains(t, out.String(), "example.com/proj/lib: a new module, nothing to compare")

	// The release commits as the user the test's git configuration names.
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	out.Reset()
	require.NoError(t, Run(ctx, Options{Root: root, Version: "v0.2.0", Out: &out, Now: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)}))
	tags := strings.Fields(gitRun(t, root, "tag", "-l"))
	assert.ElementsMatch(t, []string{"app/v0.2.0", "internal/helper/v0.2.0", "lib/v0.2.0"}, tags)
	assert.Empty(t, gitRun(t, root, "status", "--porcelain"))
	assert.Contains(t, gitRun(t, root, "log", "-1", "--format=%s"), "release v0.2.0")
	gomod, err := os.ReadFile(filepath.Join(root, "app", "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "example.com/proj/lib v0.2.0")

	err = Run(ctx, Options{Root: root, Version: "v0.2.0", DryRun: true, Out: &out})
	assert.ErrorContains(t, err, "tag lib/v0.2.0 exists already")

	// An incompatible change: Greet takes two arguments now.
	lib := filepath.Join(root, "lib", "lib.go")
	src, err := os.ReadFile(lib)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lib, bytes.Replace(src, []byte("func Greet(name string) string { return helper.Hello() + \", \" + name }"),
		[]byte("func Greet(greeting, name string) string { return greeting + \", \" + name }\n\n// Hello is new.\nfunc Hello() string { return helper.Hello() }"), 1), 0o644))
	main := filepath.Join(root, "app", "main.go")
	src, err = os.ReadFile(main)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(main, bytes.Replace(src, []byte(`lib.Greet("you")`), []byte(`lib.Greet("hi", "you")`), 1), 0o644))
	gitRun(t, root, "commit", "-q", "-am", "Greet takes a greeting")

	out.Reset()
	require.NoError(t, Run(ctx, Options{Root: root, Version: "v0.3.0", DryRun: true, Out: &out}))
	report := out.String()
	assert.Contains(t, report, "example.com/proj/lib: since v0.2.0, 1 incompatible and 1 compatible changes")
	assert.Contains(t, report, "INCOMPATIBLE: Greet: changed from func(string) string to func(string, string) string")
	assert.Contains(t, report, "compatible: Hello: added")
	assert.Contains(t, report, "example.com/proj/app: API unchanged since v0.2.0")
	assert.Contains(t, report, "would set the sibling requirements of lib/go.mod to v0.3.0")
	assert.Contains(t, report, "warning: CHANGELOG.md has no section \"## v0.3.0\"")

	err = Run(ctx, Options{Root: root, Version: "0.3", DryRun: true, Out: &out})
	assert.ErrorContains(t, err, `"0.3" is not a version`)
	require.NoError(t, os.WriteFile(filepath.Join(root, "stray"), []byte("x"), 0o644))
	err = Run(ctx, Options{Root: root, Version: "v0.3.0", Out: &out})
	assert.ErrorContains(t, err, "uncommitted changes")
}

func TestCrosslinkAddsAReplaceToEverySiblingAndPinsTidysVersions(t *testing.T) {
	root := workspace(t)
	mods, err := Workspace(root)
	require.NoError(t, err)
	lib := filepath.Join(root, "lib", "go.mod")
	require.NoError(t, os.WriteFile(lib, []byte("module example.com/proj/lib\n\ngo 1.26.0\n\nrequire example.com/proj/internal/helper v0.0.0-00010101000000-000000000000\n\nreplace example.com/proj/internal/helper => ../internal/helper\n"), 0o644))
	app := filepath.Join(root, "app", "go.mod")
	data, err := os.ReadFile(app)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(app, bytes.ReplaceAll(data, []byte("lib v0.0.0"), []byte("lib v0.3.0")), 0o644))

	changed, err := Crosslink(root, mods)
	require.NoError(t, err)
	assert.Contains(t, string(changed["lib"]), "replace example.com/proj/app => ../app")
	assert.Contains(t, string(changed["lib"]), "example.com/proj/internal/helper v0.3.0", "tidy's version for a replaced sibling becomes the workspace's")
	assert.Contains(t, string(changed["internal/helper"]), "replace example.com/proj/lib => ../../lib")
	assert.NotContains(t, string(changed["internal/helper"]), "example.com/proj/internal/helper =>", "no module replaces itself")
	for dir, d := range changed {
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "go.mod"), d, 0o644))
	}
	again, err := Crosslink(root, mods)
	require.NoError(t, err)
	assert.Empty(t, again)
}
