package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// otherVocabulary maps what a Juju or kubectl user types to what fixpoint
// calls it. Cobra's own suggestions only catch typos; these are words.
var otherVocabulary = map[string]string{
	"deploy":           "fixpoint apply -f ENV.cue",
	"bootstrap":        "fixpoint up -f ENV.cue",
	"log":              "fixpoint logs",
	"show-status":      "fixpoint status",
	"get":              "fixpoint status",
	"describe":         "fixpoint show-unit UNIT",
	"show-application": "fixpoint status SERVICE and fixpoint config SERVICE",
	"show-unit-status": "fixpoint show-unit UNIT",
	"unit":             "fixpoint show-unit UNIT",
	"get-config":       "fixpoint config SERVICE",
	"config-get":       "fixpoint config SERVICE",
	"set-config":       "set the service's config in ENV.cue, then fixpoint apply -f ENV.cue",
	"add-unit":         "set the service's units in ENV.cue, then fixpoint apply -f ENV.cue",
	"remove-unit":      "set the service's units in ENV.cue, then fixpoint apply -f ENV.cue",
	"scale":            "set the service's units in ENV.cue, then fixpoint apply -f ENV.cue",
	"integrate":        "add the relation to relations: in ENV.cue, then fixpoint apply -f ENV.cue",
	"relate":           "add the relation to relations: in ENV.cue, then fixpoint apply -f ENV.cue",
	"add-relation":     "add the relation to relations: in ENV.cue, then fixpoint apply -f ENV.cue",
	"relations":        "fixpoint status --relations",
	"resolve":          "fixpoint resolved UNIT",
	"retry":            "fixpoint resolved UNIT",
	"diff":             "fixpoint plan -f ENV.cue",
	"validate":         "fixpoint vet ENV.cue",
	"rollout":          "fixpoint apply -f ENV.cue --wait",
	"members":          "fixpoint cluster members",
}

// suggestCommand refuses a first word that is no fixpoint command but is
// another tool's name for one, and says which; anything else is left to
// cobra (which suggests near spellings of real commands).
func suggestCommand(root *cobra.Command, args []string) error {
	word := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			word = a
			break
		}
		if a == "--" {
			return nil
		}
	}
	hint, ok := otherVocabulary[word]
	if !ok {
		return nil
	}
	for _, c := range root.Commands() {
		if c.Name() == word || c.HasAlias(word) {
			return nil
		}
	}
	if strings.HasPrefix(hint, "fixpoint ") {
		return exitf(exitFailed, "unknown command %q; did you mean %s? (fixpoint --help lists the commands)", word, hint)
	}
	return exitf(exitFailed, "unknown command %q; in fixpoint, %s (fixpoint --help lists the commands)", word, hint)
}
