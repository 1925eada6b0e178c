//! What we send to 0.3 agents (docs/protocol-notes.md, "0.3 compatibility"). Decoding needs no
//! counterpart: the tolerant decoders in `types` read 0.3 shapes directly.

use serde_json::{Map, Value, json};

use super::types::{Message, Part, PartContent, Role, SendMessageRequest};

fn part(p: &Part) -> Value {
    let mut out = match &p.content {
        PartContent::Text(t) => json!({"kind": "text", "text": t}),
        PartContent::Raw(b) => json!({"kind": "file", "file": file(p, "bytes", b)}),
        PartContent::Url(u) => json!({"kind": "file", "file": file(p, "uri", u)}),
        PartContent::Data(d) => json!({"kind": "data", "data": d}),
        PartContent::Unsupported(_) => json!({"kind": "data", "data": null}),
    };
    if let Some(m) = &p.metadata {
        out["metadata"] = Value::Object(m.clone());
    }
    out
}

fn file(p: &Part, key: &str, value: &str) -> Value {
    let mut f = Map::new();
    f.insert(key.into(), Value::String(value.into()));
    if let Some(name) = &p.filename {
        f.insert("name".into(), Value::String(name.clone()));
    }
    if let Some(mime) = &p.media_type {
        f.insert("mimeType".into(), Value::String(mime.clone()));
    }
    Value::Object(f)
}

pub fn message(m: &Message) -> Value {
    let role = match m.role {
        Role::Agent => "agent",
        _ => "user",
    };
    let mut out = json!({
        "kind": "message",
        "messageId": m.message_id,
        "role": role,
        "parts": m.parts.iter().map(part).collect::<Vec<_>>(),
    });
    let obj = out.as_object_mut().expect("object literal");
    if let Some(c) = &m.context_id {
        obj.insert("contextId".into(), json!(c));
    }
    if let Some(t) = &m.task_id {
        obj.insert("taskId".into(), json!(t));
    }
    if let Some(md) = &m.metadata {
        obj.insert("metadata".into(), Value::Object(md.clone()));
    }
    if !m.extensions.is_empty() {
        obj.insert("extensions".into(), json!(m.extensions));
    }
    if !m.reference_task_ids.is_empty() {
        obj.insert("referenceTaskIds".into(), json!(m.reference_task_ids));
    }
    out
}

/// `message/send` and `message/stream` params. 0.3's `blocking` is the inverse of 1.0's
/// `returnImmediately`.
pub fn send_params(r: &SendMessageRequest) -> Value {
    let mut params = json!({"message": message(&r.message)});
    let config = r.configuration.clone().unwrap_or_default();
    let mut c = json!({"blocking": !r.returns_immediately()});
    if !config.accepted_output_modes.is_empty() {
        c["acceptedOutputModes"] = json!(config.accepted_output_modes);
    }
    if let Some(n) = config.history_length {
        c["historyLength"] = json!(n);
    }
    params["configuration"] = c;
    if let Some(md) = &r.metadata {
        params["metadata"] = Value::Object(md.clone());
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::types::SendMessageConfiguration;

    #[test]
    fn a_reply_becomes_a_0_3_message() {
        let mut m = Message::user(vec![Part::text("main"), Part::data(json!({"approved": true}))]);
        m.task_id = Some("t".into());
        m.context_id = Some("c".into());
        let req = SendMessageRequest {
            message: m.clone(),
            configuration: Some(SendMessageConfiguration {
                return_immediately: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        let p = send_params(&req);
        assert_eq!(p["message"]["role"], "user");
        assert_eq!(p["message"]["kind"], "message");
        assert_eq!(p["message"]["parts"][0], json!({"kind":"text","text":"main"}));
        assert_eq!(
            p["message"]["parts"][1],
            json!({"kind":"data","data":{"approved":true}})
        );
        assert_eq!(p["message"]["taskId"], "t");
        assert_eq!(p["configuration"]["blocking"], false);
        // and our own decoder reads it back as the same message
        let back: Message = serde_json::from_value(p["message"].clone()).unwrap();
        assert_eq!(back, m);
    }
}
