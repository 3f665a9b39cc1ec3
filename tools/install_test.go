package tools_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"

	"github.com/ratchet-go/ratchet/tools/internal/release"
)

// readmeSection returns the text of the README's section under heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	require.True(t, ok, "the README has a section %q", heading)
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// fenced returns the blocks of section fenced with lang.
func fenced(section, lang string) []string {
	var out []string
	rest := section
	for {
		_, after, ok := strings.Cut(rest, "```"+lang+"\n")
		if !ok {
			return out
		}
		block, tail, _ := strings.Cut(after, "```\n")
		out = append(out, block)
		rest = tail
	}
}

// checkoutTree copies the files of the checkout that git tracks or would
// track (not ignored) into a new folder: the tree a release would publish.
func checkoutTree(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err)
	tree := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("..", name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		dst := filepath.Join(tree, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, copyFile(src, dst, info.Mode().Perm()))
	}
	return tree
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestReadmeInstallsFromAModuleProxy installs Ratchet as a user outside
// this repository would: a file-based module proxy serves the checkout's
// modules at the README's version (their sibling requirements set to it,
// as a release does); in a new module, with GOWORK=off and no replace
// directive, the README's `go get` lines run as they are written, one
// command per line; then the README's quick start is built and run, and
// prints what its Output comment says. Last, a program that imports a
// package of every public module builds through the same proxy.
func TestReadmeInstallsFromAModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module proxy of the checkout and installs from it")
	}
	install := readmeSection(t, "Install")
	var gets []string
	for _, block := range fenced(install, "sh") {
		for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
			if strings.HasPrefix(line, "go get ") {
				gets = append(gets, line)
			}
		}
	}
	require.NotEmpty(t, gets, "the Install section has go get lines")
	version := ""
	getLine := regexp.MustCompile(`^go get (github\.com/ratchet-go/ratchet/[a-z0-9/]+)@(v\d+\.\d+\.\d+)$`)
	for _, line := range gets {
		m := getLine.FindStringSubmatch(line)
		require.NotNil(t, m, "%q: one go get a line, one module of this repository at a version", line)
		if version == "" {
			version = m[2]
		}
		assert.Equal(t, version, m[2], "every module at one version")
	}
	quick := fenced(readmeSection(t, "Quick start"), "go")
	require.Len(t, quick, 1, "the quick start is one Go block")
	want := quickStartOutput(t, quick[0])
	assert.LessOrEqual(t, strings.Count(quick[0], "\n"), 40, "the quick start has at most 40 lines")

	tree := checkoutTree(t)
	mods, err := release.Workspace(tree)
	require.NoError(t, err)
	changed, err := release.Rewrite(tree, mods, version)
	require.NoError(t, err)
	for dir, data := range changed {
		require.NoError(t, os.WriteFile(filepath.Join(tree, dir, "go.mod"), data, 0o644))
	}
	proxy := t.TempDir()
	require.NoError(t, release.BuildProxy(tree, mods, version, time.Now(), proxy))
	modCache := t.TempDir()
	env, err := release.ProxyEnv(proxy, modCache, mods)
	require.NoError(t, err)

	user := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s:\n%s%s", strings.Join(args, " "), stdout.Bytes(), stderr.Bytes())
		return stdout.String()
	}
	run(user, "go", "mod", "init", "example.com/quickstart")
	for _, line := range gets {
		run(user, strings.Fields(line)...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(user, "main.go"), []byte(quick[0]), 0o644))
	gomod, err := os.ReadFile(filepath.Join(user, "go.mod"))
	require.NoError(t, err)
	assert.NotContains(t, string(gomod), "replace", "nothing but the README's lines went into go.mod")
	assert.Equal(t, want, run(user, "go", "run", "."), "the quick start prints what its Output comment says")

	// A program that imports a package of every public module.
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedModule, Dir: ".."}, workspacePatterns(t)...)
	require.NoError(t, err)
	chosen := map[string]string{} // module path -> the package imported
	for _, p := range pkgs {
		if p.Module == nil || p.Name == "main" || slices.Contains(strings.Split(p.PkgPath, "/"), "internal") {
			continue
		}
		if cur, ok := chosen[p.Module.Path]; !ok || len(p.PkgPath) < len(cur) {
			chosen[p.Module.Path] = p.PkgPath
		}
	}
	public := 0
	for _, m := range mods {
		if m.Public() && chosen[m.Path] != "" {
			public++
		}
	}
	require.Len(t, chosen, public, "one package for each public module")
	every := t.TempDir()
	run(every, "go", "mod", "init", "example.com/everymodule")
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, m := range slices.Sorted(func(yield func(string) bool) {
		for m := range chosen {
			if !yield(m) {
				return
			}
		}
	}) {
		run(every, "go", "get", m+"@"+version)
		fmt.Fprintf(&src, "\t_ %q\n", chosen[m])
	}
	src.WriteString(")\n\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(every, "main.go"), []byte(src.String()), 0o644))
	run(every, "go", "mod", "tidy")
	run(every, "go", "build", "-o", os.DevNull, ".")
	t.Logf("installed %d modules at %s from a proxy of the checkout; the quick start printed %q", len(chosen), version, want)
}

// quickStartOutput returns what the program's Output comment says it
// prints: "// Output: X" on one line, or the lines after "// Output:".
func quickStartOutput(t *testing.T, program string) string {
	t.Helper()
	_, after, ok := strings.Cut(program, "// Output:")
	require.True(t, ok, "the quick start has an Output comment")
	var out []string
	lines := strings.Split(after, "\n")
	if first := strings.TrimSpace(lines[0]); first != "" {
		return first + "\n"
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "//") {
			break
		}
		out = append(out, strings.TrimSpace(strings.TrimPrefix(l, "//")))
	}
	return strings.Join(out, "\n") + "\n"
}
