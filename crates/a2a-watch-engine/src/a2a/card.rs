//! The agent card (proto AgentCard; docs/protocol-notes.md, "Versions and cards"). Decodes 1.0, 0.3
//! and hybrid cards; `interfaces()` and `requirements()` give one normalized view of either.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::lenient;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub version: String,
    #[serde(default, deserialize_with = "lenient::list")]
    pub supported_interfaces: Vec<AgentInterface>,
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
    #[serde(default, deserialize_with = "lenient::list")]
    pub default_input_modes: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list")]
    pub default_output_modes: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list")]
    pub skills: Vec<AgentSkill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<Value>,

    // 0.3 fields (docs/protocol-notes.md, "0.3 compatibility"); read, never written.
    #[serde(default, skip_serializing)]
    pub url: Option<String>,
    #[serde(default, skip_serializing)]
    pub preferred_transport: Option<String>,
    #[serde(default, skip_serializing)]
    pub protocol_version: Option<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing)]
    pub additional_interfaces: Vec<LegacyInterface>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing)]
    pub security: Vec<BTreeMap<String, Vec<String>>>,
    #[serde(default, skip_serializing)]
    pub supports_authenticated_extended_card: Option<bool>,
    #[serde(default, skip_serializing)]
    pub supports_extended_agent_card: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    #[serde(default, deserialize_with = "lenient::text")]
    pub url: String,
    /// Open string: JSONRPC, HTTP+JSON, GRPC or a URI (spec section 5.8).
    #[serde(default, deserialize_with = "lenient::text")]
    pub protocol_binding: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LegacyInterface {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub transport: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    #[serde(default, deserialize_with = "lenient::flag")]
    pub streaming: bool,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub push_notifications: bool,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub extended_agent_card: bool,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    #[serde(default)]
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    #[serde(default, deserialize_with = "lenient::text")]
    pub id: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: String,
    #[serde(default, deserialize_with = "lenient::list")]
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    #[serde(default, deserialize_with = "lenient::list", skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub organization: String,
}

/// One alternative: every scheme named here is needed (the OpenAPI convention;
/// docs/protocol-notes.md, "Versions and cards").
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SecurityRequirement {
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
}

/// `{"list": [scopes]}`; a2a-python writes an empty one as `{}` (docs/protocol-notes.md,
/// "SDK quirks: a2a-python").
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StringList {
    #[serde(default, deserialize_with = "lenient::list")]
    pub list: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiKeyLocation {
    Header,
    Query,
    Cookie,
}

/// The five proto SecurityScheme variants, plus a kind we do not know (kept by name).
#[derive(Debug, Clone, PartialEq)]
pub enum SecurityScheme {
    ApiKey {
        location: ApiKeyLocation,
        name: String,
        description: Option<String>,
    },
    HttpAuth {
        scheme: String,
        bearer_format: Option<String>,
        description: Option<String>,
    },
    OAuth2 {
        flows: Value,
        oauth2_metadata_url: Option<String>,
        description: Option<String>,
    },
    OpenIdConnect {
        open_id_connect_url: String,
        description: Option<String>,
    },
    Mtls {
        description: Option<String>,
    },
    Unknown(String),
}

impl SecurityScheme {
    /// How a person would name it in an error message.
    pub fn describe(&self) -> String {
        match self {
            SecurityScheme::ApiKey { location, name, .. } => {
                format!("API key ({} {name})", location.as_str())
            }
            SecurityScheme::HttpAuth { scheme, .. } => format!("HTTP {scheme}"),
            SecurityScheme::OAuth2 { .. } => "OAuth 2".to_string(),
            SecurityScheme::OpenIdConnect { .. } => "OpenID Connect".to_string(),
            SecurityScheme::Mtls { .. } => "mutual TLS".to_string(),
            SecurityScheme::Unknown(kind) => format!("unknown scheme {kind}"),
        }
    }
}

impl ApiKeyLocation {
    pub fn as_str(&self) -> &'static str {
        match self {
            ApiKeyLocation::Header => "header",
            ApiKeyLocation::Query => "query",
            ApiKeyLocation::Cookie => "cookie",
        }
    }

    fn parse(s: Option<&str>) -> ApiKeyLocation {
        match s.map(str::to_ascii_lowercase).as_deref() {
            Some("query") => ApiKeyLocation::Query,
            Some("cookie") => ApiKeyLocation::Cookie,
            _ => ApiKeyLocation::Header,
        }
    }
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        // 1.0: a oneof whose one key names the kind. Hybrid cards add 0.3 keys beside it.
        let wrapped = [
            "apiKeySecurityScheme",
            "httpAuthSecurityScheme",
            "oauth2SecurityScheme",
            "openIdConnectSecurityScheme",
            "mtlsSecurityScheme",
        ]
        .into_iter()
        .find_map(|k| v.get(k).map(|inner| (k, inner)));
        let (kind, body) = match wrapped {
            Some((k, inner)) => (k.to_string(), inner),
            // 0.3: `{"type": "http", "scheme": "bearer"}` and friends.
            None => (str_field(&v, "type").unwrap_or_default(), &v),
        };
        let description = str_field(body, "description");
        Ok(match kind.as_str() {
            "apiKeySecurityScheme" | "apiKey" => SecurityScheme::ApiKey {
                location: ApiKeyLocation::parse(
                    body.get("location").or_else(|| body.get("in")).and_then(Value::as_str),
                ),
                name: str_field(body, "name").unwrap_or_default(),
                description,
            },
            "httpAuthSecurityScheme" | "http" => SecurityScheme::HttpAuth {
                scheme: str_field(body, "scheme").unwrap_or_default(),
                bearer_format: str_field(body, "bearerFormat"),
                description,
            },
            "oauth2SecurityScheme" | "oauth2" => SecurityScheme::OAuth2 {
                flows: body.get("flows").cloned().unwrap_or(Value::Null),
                oauth2_metadata_url: str_field(body, "oauth2MetadataUrl"),
                description,
            },
            "openIdConnectSecurityScheme" | "openIdConnect" => SecurityScheme::OpenIdConnect {
                open_id_connect_url: str_field(body, "openIdConnectUrl").unwrap_or_default(),
                description,
            },
            "mtlsSecurityScheme" | "mutualTLS" => SecurityScheme::Mtls { description },
            other => SecurityScheme::Unknown(other.to_string()),
        })
    }
}

impl Serialize for SecurityScheme {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut body = serde_json::Map::new();
        let mut put = |k: &str, v: Option<&String>| {
            if let Some(v) = v {
                body.insert(k.into(), Value::String(v.clone()));
            }
        };
        let key = match self {
            SecurityScheme::ApiKey {
                location,
                name,
                description,
            } => {
                put("location", Some(&location.as_str().to_string()));
                put("name", Some(name));
                put("description", description.as_ref());
                "apiKeySecurityScheme"
            }
            SecurityScheme::HttpAuth {
                scheme,
                bearer_format,
                description,
            } => {
                put("scheme", Some(scheme));
                put("bearerFormat", bearer_format.as_ref());
                put("description", description.as_ref());
                "httpAuthSecurityScheme"
            }
            SecurityScheme::OAuth2 {
                flows,
                oauth2_metadata_url,
                description,
            } => {
                put("oauth2MetadataUrl", oauth2_metadata_url.as_ref());
                put("description", description.as_ref());
                body.insert("flows".into(), flows.clone());
                "oauth2SecurityScheme"
            }
            SecurityScheme::OpenIdConnect {
                open_id_connect_url,
                description,
            } => {
                put("openIdConnectUrl", Some(open_id_connect_url));
                put("description", description.as_ref());
                "openIdConnectSecurityScheme"
            }
            SecurityScheme::Mtls { description } => {
                put("description", description.as_ref());
                "mtlsSecurityScheme"
            }
            SecurityScheme::Unknown(kind) => return serde_json::json!({ kind: {} }).serialize(s),
        };
        let mut outer = serde_json::Map::new();
        outer.insert(key.into(), Value::Object(body));
        outer.serialize(s)
    }
}

/// Wire bindings we implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Binding {
    JsonRpc,
    /// HTTP+JSON, which people call REST.
    Rest,
    /// gRPC (spec section 10), 1.0 only.
    Grpc,
}

impl Binding {
    pub fn wire_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::Rest => "HTTP+JSON",
            Binding::Grpc => "GRPC",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSON-RPC",
            Binding::Rest => "HTTP+JSON",
            Binding::Grpc => "gRPC",
        }
    }

    fn parse(name: &str) -> Option<Binding> {
        match name.to_ascii_uppercase().as_str() {
            "JSONRPC" | "JSON-RPC" => Some(Binding::JsonRpc),
            "HTTP+JSON" | "REST" | "HTTP_JSON" => Some(Binding::Rest),
            "GRPC" => Some(Binding::Grpc),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ProtocolVersion {
    V1_0,
    V0_3,
}

impl ProtocolVersion {
    pub fn label(self) -> &'static str {
        match self {
            ProtocolVersion::V1_0 => "1.0",
            ProtocolVersion::V0_3 => "0.3",
        }
    }

    /// Major.Minor only: cards say "1.0.0", "0.3.0" (spec section 3.6).
    fn parse(v: &str) -> Option<ProtocolVersion> {
        let mut it = v.trim().split('.');
        match (it.next(), it.next()) {
            (Some("1"), Some("0") | None) => Some(ProtocolVersion::V1_0),
            (Some("0"), Some("3") | Some("2")) => Some(ProtocolVersion::V0_3),
            _ => None,
        }
    }
}

/// One interface the card offers, read from either card shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub url: String,
    /// The binding as the card names it (open string).
    pub binding_name: String,
    pub version_name: String,
    pub tenant: Option<String>,
}

impl Interface {
    /// The binding and version if we speak them.
    pub fn supported(&self) -> Option<(Binding, ProtocolVersion)> {
        let binding = Binding::parse(&self.binding_name)?;
        let version = ProtocolVersion::parse(&self.version_name)?;
        // 0.3 REST differed per SDK (docs/protocol-notes.md, "0.3 compatibility"), and 0.3 gRPC
        // is another proto package: we speak 0.3 over JSON-RPC only.
        (version == ProtocolVersion::V1_0 || binding == Binding::JsonRpc).then_some((binding, version))
    }
}

impl AgentCard {
    /// The interfaces in the card's preference order (spec section 8.3.1). A card with
    /// `supportedInterfaces` is read as 1.0-style even when 0.3 fields are merged in.
    pub fn interfaces(&self) -> Vec<Interface> {
        if !self.supported_interfaces.is_empty() {
            return self
                .supported_interfaces
                .iter()
                .map(|i| Interface {
                    url: i.url.clone(),
                    binding_name: i.protocol_binding.clone(),
                    version_name: i.protocol_version.clone(),
                    tenant: i.tenant.clone().filter(|t| !t.is_empty()),
                })
                .collect();
        }
        let version = self.protocol_version.clone().unwrap_or_else(|| "0.3".into());
        let mut out = Vec::new();
        if let Some(url) = &self.url {
            out.push(Interface {
                url: url.clone(),
                binding_name: self.preferred_transport.clone().unwrap_or_else(|| "JSONRPC".into()),
                version_name: version.clone(),
                tenant: None,
            });
        }
        for extra in &self.additional_interfaces {
            let candidate = Interface {
                url: extra.url.clone(),
                binding_name: extra.transport.clone(),
                version_name: version.clone(),
                tenant: None,
            };
            if !out.contains(&candidate) {
                out.push(candidate);
            }
        }
        out
    }

    /// The security alternatives, from `securityRequirements` (1.0) or `security` (0.3).
    pub fn requirements(&self) -> Vec<SecurityRequirement> {
        if !self.security_requirements.is_empty() {
            return self.security_requirements.clone();
        }
        self.security
            .iter()
            .map(|alt| SecurityRequirement {
                schemes: alt
                    .iter()
                    .map(|(name, scopes)| (name.clone(), StringList { list: scopes.clone() }))
                    .collect(),
            })
            .collect()
    }

    pub fn has_extended_card(&self) -> bool {
        self.capabilities.extended_agent_card
            || self.supports_authenticated_extended_card == Some(true)
            || self.supports_extended_agent_card == Some(true)
    }

    /// Does the card declare this extension (capabilities.extensions)?
    pub fn declares_extension(&self, uri: &str) -> bool {
        self.capabilities.extensions.iter().any(|e| e.uri == uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_five_scheme_variants_and_0_3_types_decode() {
        let card: AgentCard = serde_json::from_value(json!({
        "name":"x","securitySchemes":{
            "key":{"apiKeySecurityScheme":{"location":"query","name":"api_key"}},
            "bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}},
            "oauth":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://t","scopes":{}}}}},
            "oidc":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://o"}},
            "mtls":{"mtlsSecurityScheme":{}},
            "old":{"type":"apiKey","in":"header","name":"X-Key"},
            "oldbearer":{"type":"http","scheme":"bearer"},
            "future":{"quantumSecurityScheme":{}}
        }}))
        .unwrap();
        let s = &card.security_schemes;
        assert_eq!(
            s["key"],
            SecurityScheme::ApiKey {
                location: ApiKeyLocation::Query,
                name: "api_key".into(),
                description: None
            }
        );
        assert!(
            matches!(&s["bearer"], SecurityScheme::HttpAuth { scheme, bearer_format: Some(f), .. } if scheme == "Bearer" && f == "JWT")
        );
        assert!(matches!(&s["oauth"], SecurityScheme::OAuth2 { .. }));
        assert!(
            matches!(&s["oidc"], SecurityScheme::OpenIdConnect { open_id_connect_url, .. } if open_id_connect_url == "https://o")
        );
        assert!(matches!(&s["mtls"], SecurityScheme::Mtls { .. }));
        assert!(
            matches!(&s["old"], SecurityScheme::ApiKey { location: ApiKeyLocation::Header, name, .. } if name == "X-Key")
        );
        assert!(matches!(&s["oldbearer"], SecurityScheme::HttpAuth { scheme, .. } if scheme == "bearer"));
        assert!(matches!(&s["future"], SecurityScheme::Unknown(_)));
        let again: AgentCard = serde_json::from_value(serde_json::to_value(&card).unwrap()).unwrap();
        assert_eq!(again.security_schemes["key"], s["key"]);
        assert_eq!(again.security_schemes["oauth"], s["oauth"]);
    }

    #[test]
    fn a_0_3_card_normalizes_to_interfaces_and_requirements() {
        let card: AgentCard = serde_json::from_value(json!({
            "name":"old","url":"http://h/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",
            "additionalInterfaces":[{"url":"http://h/a2a","transport":"JSONRPC"},{"url":"http://h/v1","transport":"HTTP+JSON"}],
            "security":[{"bearer":[]}],"supportsAuthenticatedExtendedCard":true}))
        .unwrap();
        let ifaces = card.interfaces();
        assert_eq!(ifaces.len(), 2, "duplicate of the main url dropped");
        assert_eq!(ifaces[0].supported(), Some((Binding::JsonRpc, ProtocolVersion::V0_3)));
        assert_eq!(ifaces[1].supported(), None, "0.3 REST is not spoken");
        assert_eq!(card.requirements()[0].schemes["bearer"].list, Vec::<String>::new());
        assert!(card.has_extended_card());
    }

    #[test]
    fn interfaces_keep_card_order_and_skip_unknown_bindings() {
        let card: AgentCard = serde_json::from_value(json!({"supportedInterfaces":[
            {"url":"wss://h","protocolBinding":"https://example.com/bindings/websocket","protocolVersion":"1.0"},
            {"url":"h:1","protocolBinding":"GRPC","protocolVersion":"0.3"},
            {"url":"h:1","protocolBinding":"GRPC","protocolVersion":"1.0"},
            {"url":"http://h/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0.0"},
            {"url":"http://h/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
            "url":"http://h/","protocolVersion":"0.3.0"}))
        .unwrap();
        let supported: Vec<_> = card.interfaces().iter().filter_map(Interface::supported).collect();
        assert_eq!(
            supported,
            vec![
                (Binding::Grpc, ProtocolVersion::V1_0),
                (Binding::Rest, ProtocolVersion::V1_0),
                (Binding::JsonRpc, ProtocolVersion::V1_0)
            ],
            "a custom binding and 0.3 gRPC are skipped"
        );
    }

    #[test]
    fn empty_scope_lists_may_omit_the_list_key() {
        let r: SecurityRequirement = serde_json::from_value(json!({"schemes":{"bearer":{}}})).unwrap();
        assert!(r.schemes["bearer"].list.is_empty());
    }
}
