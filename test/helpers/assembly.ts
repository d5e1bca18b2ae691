import { NestedStack, Stack } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = any; // CloudFormation template fragments

/** One template of a synthesized stack: the root's, or a nested stack's with the resource that holds it. */
export interface StackTemplate {
  /** The construct path (`CredentialService`, `CredentialService/Tenancy`). */
  readonly path: string;
  readonly template: Json;
  /** For a nested stack: its parent's template and the AWS::CloudFormation::Stack resource there. */
  readonly parent?: { readonly stack: StackTemplate; readonly resourceId: string };
}

/**
 * Every template of a stack as synthesized into `assemblyDir`: the root's first, then each nested
 * stack's (read from the file the parent's asset points to), each linked to its parent.
 */
export function stackTemplates(root: Stack, assemblyDir: string): StackTemplate[] {
  const byStack = new Map<Stack, StackTemplate>();
  const rootTemplate: StackTemplate = { path: root.node.path, template: JSON.parse(readFileSync(join(assemblyDir, root.templateFile), 'utf8')) };
  byStack.set(root, rootTemplate);
  const nested = root.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
  // Parents before children: construct paths are shorter.
  nested.sort((a, b) => a.node.path.length - b.node.path.length);
  for (const stack of nested) {
    const parentStack = stack.nestedStackParent!;
    const parent = byStack.get(parentStack);
    if (!parent) throw new Error(`nested stack ${stack.node.path} has a parent outside ${root.node.path}`);
    const resource = stack.nestedStackResource!;
    const resourceId = parentStack.resolve(resource.logicalId) as string;
    byStack.set(stack, { path: stack.node.path, template: JSON.parse(readFileSync(join(assemblyDir, stack.templateFile), 'utf8')), parent: { stack: parent, resourceId } });
  }
  return [...byStack.values()];
}

/** A resource of some template of the assembly. */
export interface Located {
  readonly stack: StackTemplate;
  readonly id: string;
  readonly resource: Json;
}

export function resourcesOf(stacks: readonly StackTemplate[], type?: string): Located[] {
  return stacks.flatMap((stack) =>
    Object.entries(stack.template.Resources as Record<string, Json>)
      .filter(([, r]) => type === undefined || r.Type === type)
      .map(([id, resource]) => ({ stack, id, resource })),
  );
}

/** The template a nested stack resource holds. */
export function childOf(stacks: readonly StackTemplate[], parent: StackTemplate, resourceId: string): StackTemplate {
  const child = stacks.find((s) => s.parent?.stack === parent && s.parent.resourceId === resourceId);
  if (!child) throw new Error(`no nested template for ${parent.path}/${resourceId}`);
  return child;
}
