package main

import (
	"github.com/spf13/cobra"
)

// pendingJujuCommand is a Juju command jubilant may call that the juju
// front does not carry out yet: it exits 1 naming the command, why, and
// what to do with fixpoint meanwhile, never succeeding silently.
type pendingJujuCommand struct {
	name    string
	aliases []string
	why     string
	instead string
}

// pendingJujuCommands are the Juju commands jubilant issues that the
// front does not carry out: what fixpoint has no counterpart for.
var pendingJujuCommands = []pendingJujuCommand{
	{name: "refresh", why: "a service's charm comes from the environment", instead: "point the service at the new charm in the environment file and run fixpoint apply -f ENV.cue"},
	{name: "ssh", why: "the front does not reach machines itself", instead: "fixpoint exec --unit UNIT -- COMMAND runs a command in a unit's hook context"},
	{name: "scp", why: "the front does not reach machines itself", instead: "copy with scp to the machine's address (juju status shows it)"},
	{name: "consume", why: "fixpoint has no cross-model relations", instead: "relate services of one environment"},
	{name: "offer", why: "fixpoint has no cross-model relations", instead: "relate services of one environment"},
	{name: "add-machine", why: "machines join by running fixpoint agent", instead: "run fixpoint agent on the machine with a join token"},
	{name: "bootstrap", why: "a control plane is started, not bootstrapped into a cloud", instead: "run fixpoint up, or fixpoint server --bootstrap and save it with fixpoint login"},
	{name: "add-cloud", why: "fixpoint has no clouds: machines join by running an agent", instead: "run fixpoint agent on each machine"},
	{name: "update-cloud", why: "fixpoint has no clouds: machines join by running an agent", instead: "run fixpoint agent on each machine"},
	{name: "add-credential", why: "the cloud credential charms read is declared in the environment", instead: "declare credential in the environment file and run fixpoint apply -f ENV.cue"},
	{name: "add-ssh-key", why: "fixpoint does not manage the machines' SSH keys", instead: "add the key to the machines' authorized_keys"},
	{name: "remove-ssh-key", why: "fixpoint does not manage the machines' SSH keys", instead: "remove the key from the machines' authorized_keys"},
	{name: "model-constraints", why: "fixpoint has no constraints: it places units on the machines that joined", instead: "see the services' placement in the environment file"},
	{name: "set-model-constraints", why: "fixpoint has no constraints: it places units on the machines that joined", instead: "place units with a service's placement in the environment file"},
}

// pendingCmd is p's command: any arguments, any flags, and an error.
func (f *jujuFront) pendingCmd(p pendingJujuCommand) *cobra.Command {
	return &cobra.Command{
		Use:                p.name,
		Aliases:            p.aliases,
		Short:              "Not supported by fixpoint yet: " + p.why,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exitf(exitFailed, "juju %s is not supported by fixpoint yet: %s; meanwhile %s", p.name, p.why, p.instead)
		},
	}
}
