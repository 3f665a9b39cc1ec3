package release

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Options configure Run.
type Options struct {
	// Root is the repository root: a git work tree holding go.work.
	Root string
	// Version is the version to release, such as v0.1.0.
	Version string
	// DryRun does everything but commit and tag: no tracked file changes.
	DryRun bool
	// Out receives the progress, the API report and the tags.
	Out io.Writer
	// Now is the release time written into the proxy's .info files; zero
	// means time.Now().
	Now time.Time
	// Keep leaves the scratch folder (the tree, the proxy, the builds) in
	// place and prints where it is.
	Keep bool
}

// Run releases every module of the workspace at Version: it rewrites the
// sibling requirements, builds every module through a file proxy of the
// rewritten tree, reports the API changes since the previous tag, then
// commits the rewrite (if it changed anything) and creates one annotated
// tag per module. It releases HEAD; without DryRun the work tree must be
// clean.
func Run(ctx context.Context, o Options) (err error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	v := o.Version
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("release: %q is not a version: give one such as v0.1.0 (v, major.minor.patch, an optional -prerelease)", v)
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	mods, err := Workspace(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if out, _ := git(root, "tag", "-l", m.Tag(v)); strings.TrimSpace(out) != "" {
			return fmt.Errorf("release: tag %s exists already: %s was released; pick the next version", m.Tag(v), v)
		}
	}
	if !o.DryRun {
		status, err := git(root, "status", "--porcelain")
		if err != nil {
			return err
		}
		if strings.TrimSpace(status) != "" {
			return fmt.Errorf("release: the work tree has uncommitted changes; commit or stash them first (a release tags HEAD):\n%s", status)
		}
	}
	if changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md")); err != nil || !bytes.Contains(changelog, []byte("## "+v)) {
		fmt.Fprintf(o.Out, "warning: CHANGELOG.md has no section \"## %s\"\n", v)
	}

	scratch, err := os.MkdirTemp("", "ratchet-release-")
	if err != nil {
		return err
	}
	if o.Keep {
		fmt.Fprintf(o.Out, "scratch folder: %s\n", scratch)
	} else {
		defer removeAll(scratch)
	}
	tree := filepath.Join(scratch, "tree")
	if err := archive(root, "HEAD", tree); err != nil {
		return err
	}
	changed, err := Rewrite(tree, mods, v)
	if err != nil {
		return err
	}
	for dir, data := range changed {
		if err := os.WriteFile(filepath.Join(tree, filepath.FromSlash(dir), "go.mod"), data, 0o644); err != nil {
			return err
		}
	}
	proxy := filepath.Join(scratch, "proxy")
	if err := BuildProxy(tree, mods, v, o.Now, proxy); err != nil {
		return err
	}
	if err := Verify(ctx, proxy, filepath.Join(scratch, "verify"), mods, v, o.Out); err != nil {
		return err
	}
	if err := reportAPI(root, scratch, tree, mods, v, o.Out); err != nil {
		return err
	}

	if o.DryRun {
		for _, m := range mods {
			if _, ok := changed[m.Dir]; ok {
				fmt.Fprintf(o.Out, "would set the sibling requirements of %s/go.mod to %s\n", m.Dir, v)
			}
		}
		for _, m := range mods {
			fmt.Fprintf(o.Out, "would tag %s\n", m.Tag(v))
		}
		return nil
	}
	if len(changed) > 0 {
		var files []string
		for dir, data := range changed {
			name := filepath.Join(filepath.FromSlash(dir), "go.mod")
			if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
				return err
			}
			files = append(files, name)
		}
		if _, err := git(root, append([]string{"add", "--"}, files...)...); err != nil {
			return err
		}
		if _, err := git(root, "commit", "-q", "-m", "release "+v+": every module requires its siblings at "+v); err != nil {
			return err
		}
	}
	for _, m := range mods {
		if _, err := git(root, "tag", "-a", m.Tag(v), "-m", m.Path+" "+v); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "tagged %s\n", m.Tag(v))
	}
	return nil
}

// reportAPI prints the API changes of every module since its previous tag.
func reportAPI(root, scratch, tree string, mods []Module, v string, out io.Writer) error {
	prev := ""
	for _, m := range mods {
		if p := previousVersion(root, m, v); p != "" && (prev == "" || semver.Compare(p, prev) > 0) {
			prev = p
		}
	}
	previous := map[string]string{}
	var oldMods []Module
	oldTree := filepath.Join(scratch, "previous")
	if prev != "" {
		var from Module
		for _, m := range mods {
			if previousVersion(root, m, v) == prev {
				previous[m.Path], from = prev, m
			}
		}
		if err := archive(root, from.Tag(prev), oldTree); err != nil {
			return err
		}
		var err error
		if oldMods, err = Workspace(oldTree); err != nil {
			return err
		}
	}
	report, err := APIReport(oldTree, tree, oldMods, mods, previous)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "API changes:")
	incompatible := 0
	for _, c := range report {
		c.Write(out)
		incompatible += c.Incompatible()
	}
	if incompatible > 0 && semver.Major(v) != "v0" && semver.Major(v) == semver.Major(prev) {
		return fmt.Errorf("release: %d incompatible API changes since %s: %s must be a new major version", incompatible, prev, v)
	}
	return nil
}

// previousVersion is the highest version below v that m is tagged at, or "".
func previousVersion(root string, m Module, v string) string {
	out, err := git(root, "tag", "-l", m.Tag("v*"))
	if err != nil {
		return ""
	}
	best := ""
	for _, tag := range strings.Fields(out) {
		t := strings.TrimPrefix(tag, strings.TrimSuffix(m.Tag("v"), "v"))
		if semver.IsValid(t) && semver.Compare(t, v) < 0 && (best == "" || semver.Compare(t, best) > 0) {
			best = t
		}
	}
	return best
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// archive writes the tree of rev (a commit or a tag) into dir.
func archive(root, rev, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", rev)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git archive %s: %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("git archive %s: %w", rev, err)
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(filepath.Separator)) {
			continue // the pax header, or a path that leaves dir
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, name); err != nil {
				return err
			}
		}
	}
}

// removeAll removes dir, module cache folders (read-only) included.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
