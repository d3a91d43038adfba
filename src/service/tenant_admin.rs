//! The operator's management of tenants (`AdminService.CreateTenant`, `ListTenants`,
//! `IssueTenantKey`, `RevokeTenantKey`): the operator token only. The model, the keys and the
//! directory every replica reads are in `tenants.rs`.

use super::error::ServiceResult;
use super::operator::require_operator;
use super::tabula::Tabula;
use super::tenants::{Caller, TenantLimits};
use crate::proto::v1 as pb;

pub(super) async fn create_tenant(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::CreateTenantRequest,
) -> ServiceResult<pb::CreateTenantResponse> {
    require_operator(caller, "CreateTenant")?;
    let record = tabula
        .tenants
        .create(
            &request.tenant_id,
            &request.display_name,
            TenantLimits::from_pb(request.limits.as_ref()),
        )
        .await?;
    Ok(pb::CreateTenantResponse {
        tenant: Some(record.to_pb()),
    })
}

pub(super) async fn list_tenants(
    tabula: &Tabula,
    caller: &Caller,
) -> ServiceResult<pb::ListTenantsResponse> {
    require_operator(caller, "ListTenants")?;
    Ok(pb::ListTenantsResponse {
        tenants: tabula
            .tenants
            .list()
            .await?
            .iter()
            .map(super::tenants::TenantRecord::to_pb)
            .collect(),
    })
}

pub(super) async fn issue_tenant_key(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::IssueTenantKeyRequest,
) -> ServiceResult<pb::IssueTenantKeyResponse> {
    require_operator(caller, "IssueTenantKey")?;
    let (key, record) = tabula.tenants.issue_key(&request.tenant_id).await?;
    let key_id = record
        .keys
        .last()
        .map(|issued| issued.id.clone())
        .unwrap_or_default();
    Ok(pb::IssueTenantKeyResponse {
        key,
        key_id,
        tenant: Some(record.to_pb()),
    })
}

pub(super) async fn revoke_tenant_key(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::RevokeTenantKeyRequest,
) -> ServiceResult<pb::RevokeTenantKeyResponse> {
    require_operator(caller, "RevokeTenantKey")?;
    let record = tabula
        .tenants
        .revoke_key(&request.tenant_id, &request.key_id)
        .await?;
    Ok(pb::RevokeTenantKeyResponse {
        tenant: Some(record.to_pb()),
    })
}

pub(super) async fn set_tenant_limits(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::SetTenantLimitsRequest,
) -> ServiceResult<pb::SetTenantLimitsResponse> {
    require_operator(caller, "SetTenantLimits")?;
    let record = tabula
        .tenants
        .set_limits(
            &request.tenant_id,
            TenantLimits::from_pb(request.limits.as_ref()),
        )
        .await?;
    Ok(pb::SetTenantLimitsResponse {
        tenant: Some(record.to_pb()),
    })
}
