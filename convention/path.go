package convention

// Step is one convention of a reconciliation path and the choice that
// changed to reach it.
type Step struct {
	Convention Convention
	Choice     string // "" for the starting convention
	From, To   string // the choice's values before and after
}

// Path returns the conventions from a to b, changing one differing choice
// at a time in the order of ChoiceNames: path[0] is a (renamed into the
// path), the last is b's choices under b's name. Steps are named
// "a→b/choice" so one Analyzer can compute every path at once.
func Path(a, b Convention) []Step {
	steps := []Step{{Convention: a}}
	cur := a
	for _, ch := range choices {
		if ch.get(&cur) == ch.get(&b) {
			continue
		}
		before := ch.get(&cur)
		ch.set(&cur, &b)
		next := cur
		next.Name = a.Name + "→" + b.Name + "/" + ch.name
		steps = append(steps, Step{Convention: next, Choice: ch.name, From: before, To: ch.get(&cur)})
	}
	last := &steps[len(steps)-1]
	if last.Choice != "" {
		last.Convention.Name = b.Name
		last.Convention.Tool = b.Tool
	}
	return steps
}

// PathConventions returns every convention the paths of pairs need,
// without duplicates, for NewAnalyzer.
func PathConventions(pairs [][2]Convention) []Convention {
	var out []Convention
	seen := map[string]bool{}
	for _, p := range pairs {
		for _, s := range Path(p[0], p[1]) {
			if !seen[s.Convention.Name] {
				seen[s.Convention.Name] = true
				out = append(out, s.Convention)
			}
			// the end points under their own names too
		}
		for _, c := range p {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}
