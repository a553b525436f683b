package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fixpoint/fixpoint/engine/api"
	"github.com/fixpoint/fixpoint/model"
)

// docRelations binds the relations doc declares, and the charm metadata
// of each of its services by name.
func docRelations(doc *api.EnvDoc) ([]model.BoundRelation, map[string]*model.CharmMeta, error) {
	metas := map[string]*model.CharmMeta{}
	for name, spec := range doc.Env.Services {
		if ch := doc.Charms[spec.CharmHash]; ch != nil {
			metas[name] = &ch.Meta
		}
	}
	desired, err := model.Resolve(&doc.Env, doc.Charms)
	if err != nil {
		return nil, nil, fmt.Errorf("the environment as the control plane holds it does not resolve here: %v", err)
	}
	return model.BoundRelations(&doc.Env, desired), metas, nil
}

func newRelateCmd() *cobra.Command {
	var o editOpts
	cmd := &cobra.Command{
		Use:   "relate A[:ENDPOINT] B[:ENDPOINT]",
		Short: "Relate two services",
		Long: `relate adds a relation between two services to the environment's desired
document and applies it. An endpoint left out is inferred as Juju's
integrate infers it: the endpoints of the same interface where one side
provides and the other requires (peers never; every service also provides
juju-info; a container-scoped endpoint needs a subordinate on one side).
Several candidates are narrowed by leaving out juju-info; if several
remain, relate names them all and changes nothing. The relation is named
as import names a bundle's: "a-b", or "a-x-b-y" when that is taken.`,
		Example: `  fixpoint relate web db
  fixpoint relate wiki:slave db --wait`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			var name string
			var ends model.RelationEnds
			err := o.run(cmd.Context(), &edit{
				what: "relate " + strings.Join(args, " "),
				change: func(_ context.Context, doc *api.EnvDoc, env *model.Environment) error {
					rels, metas, err := docRelations(doc)
					if err != nil {
						return err
					}
					if ends, err = model.InferRelation(args[0], args[1], metas); err != nil {
						return err
					}
					name, err = model.EditAddRelation(env, ends, rels)
					return err
				},
			})
			if err == nil {
				fmt.Printf("related %s as %s\n", ends, name)
			}
			return err
		},
	}
	o.flags(cmd, false)
	return cmd
}

func newUnrelateCmd() *cobra.Command {
	var o editOpts
	cmd := &cobra.Command{
		Use:   "unrelate A[:ENDPOINT] B[:ENDPOINT]",
		Short: "Remove the relation between two services",
		Long: `unrelate removes the declared relation the two endpoints name (in either
order; an endpoint left out matches any) from the environment's desired
document and applies it: the units run their departed and broken hooks.
None, or more than one, matching is an error naming what there is.`,
		Example:           "  fixpoint unrelate web db",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeServices,
		RunE: func(cmd *cobra.Command, args []string) error {
			var found model.BoundRelation
			err := o.run(cmd.Context(), &edit{
				what: "unrelate " + strings.Join(args, " "),
				change: func(_ context.Context, doc *api.EnvDoc, env *model.Environment) error {
					rels, _, err := docRelations(doc)
					if err != nil {
						return err
					}
					if found, err = model.FindRelation(args[0], args[1], rels); err != nil {
						return err
					}
					return model.EditRemoveRelation(env, found.Name)
				},
			})
			if err == nil {
				fmt.Printf("removed relation %s (%s)\n", found.Name, found.Ends)
			}
			return err
		},
	}
	o.flags(cmd, false)
	return cmd
}
