// Outbound HTTP held to one destination policy (input URLs in inference, webhooks in the gateway).
// A separate entry point (`@tailor/proto/net`) so browser code importing `@tailor/proto` never pulls node:http.
export * from './address-policy.ts'
export * from './guarded-lookup.ts'
export * from './safe-fetch.ts'
export * from './safe-post.ts'
export * from './nats-client.ts'
