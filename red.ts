const seen: string[] = [];
const b = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  seen.push("B " + req.headers.get("authorization"));
  return new Response("{}", { status: 200 });
});
const a = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  seen.push("A " + req.headers.get("authorization"));
  return new Response(null, {
    status: 307,
    headers: { location: `http://127.0.0.1:${b.addr.port}/x` },
  });
});
const r = await fetch(`http://127.0.0.1:${a.addr.port}/y`, {
  headers: { authorization: "Basic c2VjcmV0" },
});
console.log(r.status, seen);
const r2 = await fetch(`http://127.0.0.1:${a.addr.port}/y`, {
  headers: { authorization: "Basic c2VjcmV0" },
  redirect: "manual",
});
console.log(r2.status, r2.type, seen);
await a.shutdown();
await b.shutdown();
