package dashboard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// searchKeys are the search box's typed filters, as the hint lists them.
var searchKeys = []string{"id:", "task:", "tag:", "priority:", "status:", "due:", "error:", "property:"}

// search reads the jobs view's search box: typed filters ("task:email.send
// tag:vip priority:HIGH,CRITICAL status:FAILED error:\"connection refused\"
// property:tenant=42"), a job id (with or without "id:", which opens that
// job), and words without a key, which search the last error. It returns
// the job page to open for an id, or the filters to list; the archived
// flag of cur carries over, the rest is replaced. An unknown key or a
// malformed id is an error that names it.
func (h *Handler) search(text string, cur filters) (string, filters, error) {
	f := filters{Archived: cur.Archived}
	toks, err := searchTokens(text)
	if err != nil {
		return "", f, err
	}
	var words []string
	for _, t := range toks {
		key, val, typed := strings.Cut(t, ":")
		if !typed || strings.Contains(key, " ") {
			if id, err := uuid.Parse(t); err == nil {
				return h.prefix + "/jobs/" + id.String(), f, nil
			}
			words = append(words, t)
			continue
		}
		switch strings.ToLower(key) {
		case "id":
			id, err := uuid.Parse(val)
			if err != nil {
				return "", f, fmt.Errorf("search: id:%s is not a job id (36 characters, as the copy button gives): %w", val, err)
			}
			return h.prefix + "/jobs/" + id.String(), f, nil
		case "task":
			f.Task = val
		case "tag":
			f.Tag = val
		case "priority":
			for _, p := range strings.Split(val, ",") {
				if p = strings.TrimSpace(p); p != "" {
					f.Priorities = append(f.Priorities, strings.ToUpper(p))
				}
			}
		case "status":
			f.Status = strings.ToUpper(val)
		case "due":
			f.Due = strings.ToLower(val)
		case "error":
			words = append(words, val)
		case "property":
			f.Property = val
		default:
			if id, err := uuid.Parse(t); err == nil { // not a key: an id has no colon, but be kind
				return h.prefix + "/jobs/" + id.String(), f, nil
			}
			return "", f, fmt.Errorf("search: unknown filter %q: use one of %s, or words that the last error contains", key+":", strings.Join(searchKeys, " "))
		}
	}
	f.Error = strings.Join(words, " ")
	if _, err := f.listOptions(); err != nil {
		return "", f, fmt.Errorf("search: %w", err)
	}
	return "", f, nil
}

// searchTokens splits a search into tokens at spaces, keeping a quoted
// value ("error:\"no such host\"", "\"two words\"") whole, without its
// quotes.
func searchTokens(text string) ([]string, error) {
	var out []string
	var b strings.Builder
	quoted, any := false, false
	for _, r := range text {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if any {
				out = append(out, b.String())
			}
			b.Reset()
			any = false
		default:
			b.WriteRune(r)
			any = true
		}
	}
	if quoted {
		return nil, errors.New("search: a quote is not closed")
	}
	if any {
		out = append(out, b.String())
	}
	return out, nil
}
