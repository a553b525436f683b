package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// otherVocabulary maps what a Juju or kubectl user types to what fixpoint
// calls it. Cobra's own suggestions only catch typos; these are words.
var otherVocabulary = map[string]string{
	"bootstrap":          "fixpoint up -f ENV.cue",
	"log":                "fixpoint logs",
	"show-status":        "fixpoint status",
	"get":                "fixpoint status",
	"describe":           "fixpoint show-unit UNIT",
	"show-application":   "fixpoint status SERVICE and fixpoint config SERVICE",
	"show-unit-status":   "fixpoint show-unit UNIT",
	"unit":               "fixpoint show-unit UNIT",
	"get-config":         "fixpoint config SERVICE",
	"config-get":         "fixpoint config SERVICE",
	"set-config":         "fixpoint config SERVICE KEY=VALUE",
	"scale":              "fixpoint add-unit SERVICE -n N or fixpoint remove-unit UNIT...",
	"integrate":          "fixpoint relate A B",
	"add-relation":       "fixpoint relate A B",
	"remove-relation":    "fixpoint unrelate A B",
	"remove-application": "fixpoint remove-service SERVICE",
	"export-bundle":      "fixpoint export",
	"relations":          "fixpoint status --relations",
	"resolve":            "fixpoint resolved UNIT",
	"retry":              "fixpoint resolved UNIT",
	"diff":               "fixpoint plan -f ENV.cue",
	"validate":           "fixpoint vet ENV.cue",
	"rollout":            "fixpoint apply -f ENV.cue --wait",
	"members":            "fixpoint cluster members",
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
