package genaiperf

import "fmt"

// notes collects a run's remarks for Run.Notes. A remark about requests is
// kept once with how many requests it concerned and where the first one
// was, so a file with a million odd requests gives one line, not a million.
type notes struct {
	order []string
	byKey map[string]*note
}

type note struct {
	text  string
	where string // position of the first request concerned; "" for a plain note
	count int
	warn  bool // also passed to Options.Warn
}

// add records a plain remark; warn marks it for Options.Warn too.
func (n *notes) add(warn bool, format string, args ...any) {
	n.put(fmt.Sprintf(format, args...), "", warn)
}

// addAt records a remark about the request at where ("experiment 0,
// request 3"); repeated texts are counted.
func (n *notes) addAt(where string, warn bool, text string) {
	n.put(text, where, warn)
}

func (n *notes) put(text, where string, warn bool) {
	if n.byKey == nil {
		n.byKey = map[string]*note{}
	}
	key := text
	if where == "" {
		key = "\x00" + text
	}
	if x, ok := n.byKey[key]; ok {
		x.count++
		return
	}
	n.byKey[key] = &note{text: text, where: where, count: 1, warn: warn}
	n.order = append(n.order, key)
}

// merge appends o's remarks that n does not have yet.
func (n *notes) merge(o *notes) {
	for _, k := range o.order {
		x := *o.byKey[k]
		if n.byKey == nil {
			n.byKey = map[string]*note{}
		}
		if _, ok := n.byKey[k]; !ok {
			n.byKey[k] = &x
			n.order = append(n.order, k)
		}
	}
}

// lines returns the remarks in the order first seen.
func (n *notes) lines() []string {
	var out []string
	for _, k := range n.order {
		out = append(out, n.byKey[k].String())
	}
	return out
}

// warnings returns the remarks marked warn.
func (n *notes) warnings() []string {
	var out []string
	for _, k := range n.order {
		if x := n.byKey[k]; x.warn {
			out = append(out, x.String())
		}
	}
	return out
}

func (x *note) String() string {
	switch {
	case x.where == "":
		return x.text
	case x.count == 1:
		return x.where + ": " + x.text
	}
	return fmt.Sprintf("%d requests: %s (first: %s)", x.count, x.text, x.where)
}
