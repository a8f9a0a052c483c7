// Node's proxyless gRPC client against Roster's xDS, driven by XdsClientTest: node xds-client.mjs TARGET CALLS.
// Makes CALLS unary calls of grpc.health.v1.Health/Check (an empty request, the answer's bytes
// unread) on a channel to TARGET (xds:///...), one after another, with the bootstrap the test puts
// in GRPC_XDS_BOOTSTRAP_CONFIG; prints "OK n", or the error and exits 1.
import { createRequire } from 'node:module';

// grpc-js and grpc-js-xds as `make tools` installs them under .tools/ (the test gives its path).
const require = createRequire(process.env.ROSTER_TOOLS + '/package.json');
const grpc = require('@grpc/grpc-js');
require('@grpc/grpc-js-xds').register();

const [target, calls] = process.argv.slice(2);
const client = new grpc.Client(target, grpc.credentials.createInsecure());
const bytes = (b) => b;
try {
  for (let i = 0; i < Number(calls); i++) {
    await new Promise((resolve, reject) => client.makeUnaryRequest('/grpc.health.v1.Health/Check', bytes, bytes,
      Buffer.alloc(0), { deadline: Date.now() + 10000 }, (err) => (err ? reject(err) : resolve())));
  }
  console.log('OK ' + calls);
  client.close();
  process.exit(0);
} catch (e) {
  console.log('FAIL ' + e);
  process.exit(1);
}
