// Package natsbus carries pervasim beyond one process over NATS: chains
// whose messages cross processes and machines, and homes that publish their
// events and take device updates on subjects (and, through the NATS
// server's MQTT listener, topics).
//
//   - [AttachEngine] gives a mediation engine the nats-in and nats-out
//     adapters and the nats linker, and makes Cilia's JMS-Joram and
//     JMS_Joram linker names stand for the nats linker.
//   - [PublishHome] publishes a home's events on
//     <prefix>.<home>.<eventType>.<id> and answers device updates on
//     <prefix>.<home>.devices.<id>.set.
//   - [StartServer] starts an embedded NATS server with JetStream and,
//     optionally, MQTT.
//
// # Wire format
//
// A chain message is a NATS message whose data is the content as JSON;
// each property is a header Pervasim-Property-<name> holding the value as
// JSON; the message's id is in Nats-Msg-Id ([Encode], [Decode]). Under
// load the nats linker sends several messages in one NATS message, marked
// with the Pervasim-Batch header.
//
// # Delivery
//
// Over core NATS a message is delivered at most once, in each publisher's
// order; what is published while no one subscribes is lost. With a
// JetStream stream (the "stream" property of nats-in, nats-out and the
// linker) it is delivered at least once, and receivers drop the repeats
// of the ids they have seen.
//
// # Concurrency
//
// Everything this package exports is safe for concurrent use.
package natsbus
