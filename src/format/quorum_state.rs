//! The KRaft `quorum-state` file of `__cluster_metadata-0`: a node's view
//! of the controller quorum, one JSON object (Kafka's `QuorumStateData`:
//! `leaderId`, `leaderEpoch`, `votedId`, `currentVoters` in
//! `data_version` 0, `votedDirectoryId` in 1), rewritten on every change.

use serde_json::Value;

use crate::format::error::ParseError;

/// What a `quorum-state` file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumState {
    /// The leader the node knew; `None` for `-1` (none).
    pub leader: Option<i32>,
    /// The epoch it was in.
    pub leader_epoch: Option<i32>,
    /// The candidate it voted for; `None` for `-1`.
    pub voted_for: Option<i32>,
    /// `currentVoters`, where the file has it.
    pub voters: Option<Vec<i32>>,
}

fn id(v: &Value, key: &str) -> Result<Option<i32>, ParseError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => {
            let n = x
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| ParseError::new(0, format!("\"{key}\" is not a 32-bit integer")))?;
            Ok((n >= 0).then_some(n))
        }
    }
}

/// Reads a `quorum-state` file's bytes (the caller caps their length).
pub fn parse_quorum_state(bytes: &[u8]) -> Result<QuorumState, ParseError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        // serde_json counts lines and columns; the byte is not known
        ParseError::new(0, format!("not JSON: {e}"))
    })?;
    if !v.is_object() {
        return Err(ParseError::new(0, "not a JSON object"));
    }
    let voters = match v.get("currentVoters") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|x| {
                    id(x, "voterId")?.ok_or_else(|| ParseError::new(0, "a voter without a voterId"))
                })
                .collect::<Result<Vec<i32>, ParseError>>()?,
        ),
        Some(_) => return Err(ParseError::new(0, "\"currentVoters\" is not a list")),
    };
    Ok(QuorumState {
        leader: id(&v, "leaderId")?,
        leader_epoch: id(&v, "leaderEpoch")?,
        voted_for: id(&v, "votedId")?,
        voters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_quorums_state_names_leader_epoch_and_voters() {
        // as Kafka 4.4 wrote it (testdata/kafka/unclean-4.4)
        let s = parse_quorum_state(br#"{"clusterId":"","leaderId":100,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":100}],"data_version":0}"#).unwrap();
        assert_eq!(
            s,
            QuorumState {
                leader: Some(100),
                leader_epoch: Some(1),
                voted_for: None,
                voters: Some(vec![100])
            }
        );
    }

    #[test]
    fn a_dynamic_quorums_state_has_no_voters_and_bad_files_are_errors() {
        let s = parse_quorum_state(br#"{"clusterId":"","leaderId":-1,"leaderEpoch":3,"votedId":101,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","appliedOffset":0,"data_version":1}"#).unwrap();
        assert_eq!(
            (s.leader, s.leader_epoch, s.voted_for, s.voters),
            (None, Some(3), Some(101), None)
        );
        for bad in [
            &b"{"[..],
            b"[]",
            br#"{"leaderId":"x"}"#,
            br#"{"leaderId":1e99}"#,
            br#"{"currentVoters":[{}]}"#,
            br#"{"currentVoters":3}"#,
        ] {
            assert!(
                parse_quorum_state(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
