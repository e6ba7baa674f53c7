// Preload for Node 20: @modelcontextprotocol/conformance 0.1.16 imports fs.globSync (Node 22+),
// used only by its tier-check command. On Node 20 the conformance modules get an fs with a stub.
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  const stub = 'data:text/javascript,' + encodeURIComponent(
    "import fs from 'node:fs'; export * from 'node:fs'; export default fs;" +
    "export function globSync() { throw new Error('fs.globSync needs Node 22 or later'); }");
  register('data:text/javascript,' + encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') &&
          (context.parentURL?.includes('/@modelcontextprotocol/conformance/') || context.parentURL?.includes('/conformance-2026/'))) {
        return { url: ${JSON.stringify(stub)}, shortCircuit: true };
      }
      return next(specifier, context);
    }`));
}
