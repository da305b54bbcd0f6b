// npm scripts must run on the Node 24 that the `node` devDependency installs (the Lambda runtime is
// nodejs24.x). If its install script was skipped, npm silently falls back to the system Node: fail loudly.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(
    `fleetscope needs Node 24 (the Lambda runtime nodejs24.x), but this script runs on Node ${process.versions.node}.\n` +
      'The `node` devDependency provides it through node_modules/.bin; its install script may have been skipped.\n' +
      'Run `npm ci` (package.json allows that script under "allowScripts") and try again.',
  );
  process.exit(1);
}
